// Plugin loading for Python: load_backend, the load report, autoload.
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "accel/plugin.h"
#include "accel/plugin_abi.h"
#include "bindings.h"
#include "typed_object.h"

namespace accel::python {
namespace {

// A C plugin's API versions (accel/plugin_abi.h) as `accel info --json`
// gives them: {"newest", "oldest", "negotiated"} as "1.1" (negotiated None
// when the two sides agreed on none); None for a plugin that is not a C plugin.
py::object abiDict(const PluginRecord& record) {
  if (record.abi_newest == 0 && record.abi_oldest == 0 && record.abi_negotiated == 0)
    return py::none();
  auto text = [](std::uint32_t version) {
    return std::to_string(ACCEL_PLUGIN_ABI_MAJOR_OF(version)) + "." +
           std::to_string(ACCEL_PLUGIN_ABI_MINOR_OF(version));
  };
  py::dict out;
  out["newest"] = text(record.abi_newest);
  out["oldest"] = text(record.abi_oldest);
  out["negotiated"] = record.abi_negotiated == 0 ? py::object(py::none())
                                                 : py::str(text(record.abi_negotiated));
  return out;
}

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
  out["abi"] = abiDict(record);
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
      "_load_backend", [](const std::string& path) -> Typed<"Dict[str, Any]"> {
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
      "_plugin_report",
      []() -> Typed<"List[Dict[str, Any]]"> { return recordList(pluginReport()); },
      "Every load attempt so far, in order.");
  m.def(
      "_autoload", []() -> Typed<"List[Dict[str, Any]]"> {
        PluginDiscovery found;
        {
          GilRelease release;
          found = discoverPlugins();
        }
        return recordList(found.records);
      },
      "Runs the core's plugin discovery once per process (the autoload: ACCEL_PLUGINS, "
      "ACCEL_PLUGIN_PATH, ACCEL_AUTOLOAD=0 disables; then, with ACCEL_PLUGIN_PATH "
      "unset, libaccel's own directory, as `accel info` does) and returns its records.");
  m.def(
      "_default_plugin_directories", [] { return defaultPluginDirectories(); },
      "The directories discovery searches when ACCEL_PLUGIN_PATH is unset (libaccel's).");
  m.def("_autoload_state",
        [] { return std::string(autoloadStateName(autoloadState())); });
}

}  // namespace accel::python
