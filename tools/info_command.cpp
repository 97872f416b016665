#include "info_command.h"

#include <cstdio>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>

#include "accel/accel.h"
#include "accel/plugin.h"
#include "isolated_discovery.h"
#include "plugin_abi_text.h"

namespace accel::tool {
namespace {

using json = nlohmann::ordered_json;

json statJson(const Stat& s) {
  return {{"current", s.current},
          {"peak", s.peak},
          {"allocated", s.allocated},
          {"freed", s.freed}};
}

json memoryJson(const MemoryStats& m) {
  return {{"allocated_bytes", statJson(m.allocated_bytes)},
          {"reserved_bytes", statJson(m.reserved_bytes)},
          {"active_bytes", statJson(m.active_bytes)},
          {"requested_bytes", statJson(m.requested_bytes)},
          {"allocations", statJson(m.allocations)},
          {"segments", statJson(m.segments)},
          {"num_alloc_retries", m.num_alloc_retries},
          {"num_ooms", m.num_ooms},
          {"num_device_alloc", m.num_device_alloc},
          {"num_device_free", m.num_device_free}};
}

json propertiesJson(const DeviceProperties& p) {
  return {
      {"name", p.name},
      {"total_memory_bytes", p.total_memory_bytes},
      {"multiprocessor_count", p.multiprocessor_count},
      {"compute_capability", {p.compute_capability_major, p.compute_capability_minor}},
      {"warp_size", p.warp_size},
      {"max_threads_per_multiprocessor", p.max_threads_per_multiprocessor},
      {"l2_cache_bytes", p.l2_cache_bytes},
      {"is_integrated", p.is_integrated},
      {"uuid", p.uuid}};
}

json pluginJson(const PluginRecord& r) {
  json registered = json::array();
  for (DeviceType t : r.registered) registered.push_back(deviceTypeName(t));
  return {{"path", r.path},
          {"source", r.source},
          {"status", pluginStatusName(r.status)},
          {"loaded", pluginStatusIsSuccess(r.status)},
          {"detail", r.detail},
          {"registered", registered},
          {"name", r.plugin_name},
          {"version", r.plugin_version},
          {"abi", pluginAbiJson(r)}};
}

json optionalJson(const std::optional<std::string>& value) {
  return value ? json(*value) : json(nullptr);
}

// Sets into[key] to fn(), or into[key + "_error"] to what fn threw: one
// failing query must not hide the rest of the report.
template <typename Fn>
void setOrError(json& into, const std::string& key, Fn&& fn) {
  try {
    into[key] = fn();
  } catch (const std::exception& e) {
    into[key + "_error"] = e.what();
  }
}

json backendJson(DeviceType type) {
  AcceleratorHooks& hooks = getHooks(type);
  json b;
  b["name"] = deviceTypeName(type);
  b["type_id"] = toIndex(type);
  b["built"] = hooks.isBuilt();
  b["available"] = hooks.isAvailable();
  b["device_count"] = hooks.deviceCount();
  // A driver that hangs while loading: the probes gave up waiting (bounded
  // discovery, docs/lifecycle.md), and this says why there are no devices.
  if (std::string problem = hooks.discoveryProblem(); !problem.empty())
    b["discovery_problem"] = problem;
  json capabilities = json::array();
  for (int g = 0; g < kNumHookGroups; ++g) {
    if (hooks.supports(static_cast<HookGroup>(g))) {
      capabilities.push_back(hookGroupName(static_cast<HookGroup>(g)));
    }
  }
  b["capabilities"] = capabilities;
  b["origin"] = hooksOrigin(type);
  std::optional<PluginRecord> plugin = pluginForDeviceType(type);
  b["plugin"] = plugin ? json(plugin->path) : json(nullptr);
  b["devices"] = json::array();
  // A registered backend is initialised even when it reports no device: a
  // broken configuration (ACCEL_OPENREG_DEVICES=abc) shows as its init error,
  // not as a silent "not available". Device queries go through the same lazy
  // initialisation as a framework's.
  try {
    globalContext().lazyInitDevice(type);
  } catch (const Error& e) {
    b["init_error"] = e.message();
    return b;
  } catch (const std::exception& e) {
    b["init_error"] = e.what();
    return b;
  }
  // The configuration comes first: for an unavailable backend it says why
  // (e.g. "no NVIDIA driver: libcuda.so.1 not found").
  if (hooks.supports(HookGroup::Device))
    setOrError(b, "config", [&] { return hooks.showConfig(); });
  if (!hooks.isAvailable()) return b;
  for (int i = 0; i < hooks.deviceCount(); ++i) {
    auto index = static_cast<DeviceIndex>(i);
    json d{{"index", i}, {"device", Device(type, index).str()}};
    if (hooks.supports(HookGroup::Device)) {
      setOrError(d, "properties",
                 [&] { return propertiesJson(hooks.getDeviceProperties(index)); });
    }
    if (hooks.supports(HookGroup::Memory)) {
      setOrError(d, "memory", [&] { return memoryJson(hooks.memoryStats(index)); });
    }
    b["devices"].push_back(std::move(d));
  }
  return b;
}

// A backend whose discovery failed in the separate process: what is known
// without asking it (every group query and initialisation would discover it
// here, in this process, and crash or hang with it).
json undiscoveredBackendJson(DeviceType type, const std::string& problem) {
  AcceleratorHooks& hooks = getHooks(type);
  json b;
  b["name"] = deviceTypeName(type);
  b["type_id"] = toIndex(type);
  b["built"] = hooks.isBuilt();
  b["available"] = false;
  b["device_count"] = 0;
  b["discovery_problem"] = problem;
  b["capabilities"] = json::array();
  b["origin"] = hooksOrigin(type);
  std::optional<PluginRecord> plugin = pluginForDeviceType(type);
  b["plugin"] = plugin ? json(plugin->path) : json(nullptr);
  b["devices"] = json::array();
  return b;
}

// The backends' reports, each discovered first in a separate process unless
// `inProcess`; `failed` gets the names of those whose discovery failed there.
json backendsJson(const std::vector<std::string>& plugins, bool inProcess,
                  std::vector<std::string>& failed) {
  json backends = json::array();
  for (DeviceType type : registeredHooksTypes()) {
    if (!inProcess) {
      IsolatedDiscovery probe = discoverInChild(deviceTypeName(type), plugins);
      // Not run (no process could be started): asked here, as with --in-process.
      if (!probe.safe && !probe.not_run) {
        backends.push_back(undiscoveredBackendJson(type, probe.problem));
        failed.emplace_back(deviceTypeName(type));
        continue;
      }
    }
    // Proven safe by the child (or not isolated): asked again here, so that
    // the report is this process's view.
    backends.push_back(backendJson(type));
  }
  return backends;
}

std::string formatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes,
                kUnits[unit]);
  return text;
}

// Prints `text` with its first line after `first` and the others indented.
void printIndented(std::ostream& out, const std::string& first, const std::string& indent,
                   const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  bool isFirst = true;
  while (std::getline(lines, line)) {
    out << (isFirst ? first : indent) << line << '\n';
    isFirst = false;
  }
}

std::string propertiesLine(const json& p) {
  std::string line = p.value("name", std::string("(unnamed)"));
  if (auto total = p.value("total_memory_bytes", std::uint64_t{0}); total > 0) {
    line += ", " + formatBytes(double(total));
  }
  if (int units = p.value("multiprocessor_count", 0); units > 0) {
    line += ", " + std::to_string(units) + " multiprocessors";
  }
  if (const json& cc = p["compute_capability"]; cc.is_array() && cc[0].get<int>() > 0) {
    line += ", compute capability " + std::to_string(cc[0].get<int>()) + "." +
            std::to_string(cc[1].get<int>());
  }
  if (int warp = p.value("warp_size", 0); warp > 0)
    line += ", warp " + std::to_string(warp);
  if (p.value("is_integrated", false)) line += ", integrated";
  if (auto uuid = p.value("uuid", std::string()); !uuid.empty()) line += ", uuid " + uuid;
  return line;
}

std::string memoryLine(const json& m) {
  auto current = [&](const char* stat) { return m[stat]["current"].get<double>(); };
  auto peak = [&](const char* stat) { return m[stat]["peak"].get<double>(); };
  return "memory: " + formatBytes(current("allocated_bytes")) + " allocated (peak " +
         formatBytes(peak("allocated_bytes")) + "), " +
         formatBytes(current("reserved_bytes")) + " reserved (peak " +
         formatBytes(peak("reserved_bytes")) + "), " +
         std::to_string(m["allocations"]["current"].get<std::int64_t>()) + " allocations";
}

void printBackend(const json& b, std::ostream& out) {
  const std::string indent = "                  ";
  out << "  " << b["name"].get<std::string>() << ": "
      << (b["built"].get<bool>() ? "built" : "not built") << ", "
      << (b["available"].get<bool>() ? "available" : "not available") << ", "
      << b["device_count"].get<int>()
      << (b["device_count"].get<int>() == 1 ? " device\n" : " devices\n");
  std::string groups;
  for (const json& g : b["capabilities"])
    groups += (groups.empty() ? "" : ", ") + g.get<std::string>();
  if (groups.empty() && b.contains("discovery_problem")) groups = "(not asked)";
  out << "    capabilities: " << groups << '\n';
  out << "    from:         " << b["origin"].get<std::string>() << '\n';
  if (b.contains("discovery_problem")) {
    out << "    discovery:    " << b["discovery_problem"].get<std::string>() << '\n';
  }
  if (b.contains("init_error")) {
    out << "    init failed:  " << b["init_error"].get<std::string>() << '\n';
  }
  if (b.contains("config")) printIndented(out, "    config:       ", indent, b["config"]);
  for (const json& d : b["devices"]) {
    // The device's name heads its first line; the lines after it are indented.
    std::string head = "    " + d["device"].get<std::string>();
    head.resize(indent.size(), ' ');
    auto line = [&](const std::string& text) {
      out << head << text << '\n';
      head = indent;
    };
    if (d.contains("properties")) line(propertiesLine(d["properties"]));
    if (d.contains("properties_error")) {
      line("properties: " + d["properties_error"].get<std::string>());
    }
    if (d.contains("memory")) line(memoryLine(d["memory"]));
    if (d.contains("memory_error"))
      line("memory: " + d["memory_error"].get<std::string>());
    if (head != indent) line("(no device or memory group)");
  }
}

void printPlugin(const json& p, std::ostream& out) {
  // A column of 15, and a space after a longer status ("version mismatch").
  std::string status = p["status"].get<std::string>() + ' ';
  status.resize(std::max<std::size_t>(status.size(), 15), ' ');
  out << "  " << status << p["path"].get<std::string>() << " ("
      << p["source"].get<std::string>() << ")";
  if (!p["name"].get<std::string>().empty()) {
    out << ": " << p["name"].get<std::string>() << ' ' << p["version"].get<std::string>();
  }
  if (std::string api = pluginApiPhrase(p["abi"]); !api.empty()) {
    out << (p["name"].get<std::string>().empty() ? ": " : ", ") << api;
  }
  if (!p["registered"].empty()) {
    std::string types;
    for (const json& t : p["registered"])
      types += (types.empty() ? "" : ", ") + t.get<std::string>();
    out << ", registered " << types;
  }
  out << '\n';
  if (!p["detail"].get<std::string>().empty()) {
    printIndented(out, "                   ", "                   ", p["detail"]);
  }
}

}  // namespace

json collectInfo(const PluginSetup& setup, const InfoOptions& options) {
  json info;
  info["version"] = {{"library", std::string(libraryVersion())},
                     {"c_plugin_api", coreAbiRangeJson()}};
  AutoloadConfig env = autoloadConfigFromEnvironment();
  info["autoload"] = {{"state", std::string(autoloadStateName(autoloadState()))},
                      {"ACCEL_PLUGINS", optionalJson(env.plugins)},
                      {"ACCEL_PLUGIN_PATH", optionalJson(env.plugin_path)},
                      {"ACCEL_AUTOLOAD", optionalJson(env.autoload)},
                      {"default_directories", setup.defaultDirectories}};
  info["discovery_isolated"] = !options.in_process;
  std::vector<std::string> failed;
  info["backends"] =
      backendsJson(setup.pluginsForSeparateProcesses, options.in_process, failed);
  if (failed.empty()) {
    std::optional<DeviceType> current = globalContext().currentAccelerator();
    info["current_accelerator"] =
        current ? json(deviceTypeName(*current)) : json(nullptr);
  } else {
    // Finding it asks each backend in turn, the failed ones included.
    info["current_accelerator"] = nullptr;
    info["current_accelerator_problem"] =
        "not asked: finding the current accelerator asks every backend, and the "
        "discovery of '" +
        failed.front() + "' failed in a separate process (see its discovery line)";
  }
  info["plugins"] = json::array();
  for (const PluginRecord& r : pluginReport()) info["plugins"].push_back(pluginJson(r));
  info["plugin_errors"] = setup.errors;
  info["static_registration_errors"] = staticRegistrationErrors();
  return info;
}

void printInfoText(const json& info, std::ostream& out) {
  const json& version = info["version"];
  out << "accelhooks " << version["library"].get<std::string>() << " (plugin API "
      << version["c_plugin_api"]["oldest"].get<std::string>() << "\u2013"
      << version["c_plugin_api"]["newest"].get<std::string>() << ")\n";
  const json& current = info["current_accelerator"];
  out << "current accelerator: ";
  if (info.contains("current_accelerator_problem")) {
    out << "unknown, " << info["current_accelerator_problem"].get<std::string>();
  } else {
    out << (current.is_null() ? "none" : current.get<std::string>());
  }
  out << "\n\n";

  if (info["backends"].empty()) {
    out << "backends: none registered. Load one with --plugin PATH, ACCEL_PLUGINS or "
           "ACCEL_PLUGIN_PATH (docs/plugins.md)\n";
  } else {
    out << "backends:\n";
    for (const json& b : info["backends"]) printBackend(b, out);
  }

  const json& autoload = info["autoload"];
  out << "\nplugins (autoload " << autoload["state"].get<std::string>();
  if (!autoload["default_directories"].empty()) {
    std::string dirs;
    for (const json& d : autoload["default_directories"]) {
      dirs += (dirs.empty() ? "" : ", ") + d.get<std::string>();
    }
    out << "; ACCEL_PLUGIN_PATH unset, searched " << dirs;
  }
  out << "):\n";
  if (info["plugins"].empty()) {
    out << "  none tried; set ACCEL_PLUGINS or ACCEL_PLUGIN_PATH, or pass --plugin "
           "PATH\n";
  }
  for (const json& p : info["plugins"]) printPlugin(p, out);
  for (const json& e : info["static_registration_errors"]) {
    out << "static registration error: " << e.get<std::string>() << '\n';
  }
}

namespace {

// `accel info --discover-backend NAME`: the child of discoverInChild. Loads
// the plugins as the parent did, reports the one backend and ends.
[[noreturn]] void runDiscoveryChild(const InfoOptions& options) {
  prepareDiscoveryChild();
  PluginSetup setup = setUpPlugins(options.plugins);
  std::optional<DeviceType> type = findDeviceType(options.discover_backend);
  if (!type || !isHooksRegistered(*type)) {
    finishDiscoveryChild({{"error", "no backend '" + options.discover_backend +
                                        "' is registered in the separate process"}},
                         3);
  }
  finishDiscoveryChild(backendJson(*type), 0);
}

// `accel info --load-plugin PATH`: the child of loadPluginInChild. Loads the
// plugin explicitly (asking its backends for their devices) and ends.
[[noreturn]] void runPluginLoadChild(const InfoOptions& options) {
  prepareDiscoveryChild();
  PluginSetup setup = setUpPlugins({options.load_plugin});
  json registered = json::array();
  for (const PluginRecord& record : setup.explicitPlugins) {
    for (DeviceType t : record.registered) registered.push_back(deviceTypeName(t));
  }
  finishDiscoveryChild({{"registered", registered}, {"errors", setup.errors}}, 0);
}

}  // namespace

int runInfo(const InfoOptions& options) {
  if (!options.discover_backend.empty()) runDiscoveryChild(options);
  if (!options.load_plugin.empty()) runPluginLoadChild(options);
  PluginSetup setup = setUpPlugins(options.plugins, !options.in_process);
  json info = collectInfo(setup, options);
  if (options.json) {
    std::cout << info.dump(2) << '\n';
  } else {
    printInfoText(info, std::cout);
  }
  for (const std::string& error : setup.errors)
    std::cerr << "accel info: " << error << '\n';
  return setup.errors.empty() ? 0 : 1;
}

}  // namespace accel::tool
