// Plugin loading for Python: load_backend, the load report, autoload.
#include <pybind11/stl.h>

#include "accel/plugin.h"
#include "bindings.h"

namespace accel::python {
namespace {

py::dict recordDict(const PluginRecord& record) {
  py::dict out;
  out["path"] = record.path;
  out["source"] = record.source;
  out["status"] = std::string(pluginStatusName(record.status));
  out["ok"] = pluginStatusIsSuccess(record.status);
  out["detail"] = record.detail;
  py::list registered;
  for (DeviceType type : record.registered)
    registered.append(std::string(deviceTypeName(type)));
  out["registered"] = registered;
  out["plugin_name"] = record.plugin_name;
  out["plugin_version"] = record.plugin_version;
  out["plugin_api_version"] = record.plugin_api_version;
  return out;
}

py::list recordList(const std::vector<PluginRecord>& records) {
  py::list out;
  for (const PluginRecord& record : records) out.append(recordDict(record));
  return out;
}

}  // namespace

void bindPlugins(py::module_& m) {
  m.def(
      "_load_backend",
      [](const std::string& path) {
        PluginRecord record;
        {
          GilRelease release;  // dlopen and registration may wait
          record = loadBackend(path);
        }
        return recordDict(record);
      },
      py::arg("path"),
      "loadBackend(path): the load record; raises NotAvailableError (the loader's "
      "message) when the plugin did not load.");
  m.def(
      "_plugin_report", [] { return recordList(pluginReport()); },
      "Every load attempt so far, in order.");
  m.def(
      "_autoload",
      [] {
        std::vector<PluginRecord> records;
        {
          GilRelease release;
          records = autoloadPlugins();
        }
        return recordList(records);
      },
      "Runs the once-per-process autoload (ACCEL_PLUGINS, ACCEL_PLUGIN_PATH, "
      "ACCEL_AUTOLOAD=0 disables) and returns its records.");
  m.def("_autoload_state",
        [] { return std::string(autoloadStateName(autoloadState())); });
}

}  // namespace accel::python
