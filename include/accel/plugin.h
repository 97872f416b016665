// Backend plugins: loading a backend's shared library at run time, and the
// report of every plugin the process tried to load.
//
// A plugin is a shared library that exports one C symbol, ACCEL_PLUGIN_ENTRY
// ("accel_plugin_entry_v1"), defined with the ACCEL_DEFINE_PLUGIN macro. The
// loader dlopens the file, checks the API version in both directions (the
// plugin states the version it was built for and the oldest core it accepts;
// the core refuses a plugin built for another API version), then calls the
// plugin's register function, which registers its device type and hooks.
//
// Every attempt, failed or not, is recorded as a PluginRecord; pluginReport()
// returns them for `accel info` and the absent-backend error messages. A
// failed load leaves the process working: nothing of the plugin stays
// registered if its register function threw before registering hooks.
//
// Autoload (autoloadPlugins(), run once by the first call): ACCEL_PLUGINS is
// a ':'-separated list of plugin paths; ACCEL_PLUGIN_PATH a ':'-separated
// list of directories scanned for libaccel_*.so; ACCEL_AUTOLOAD=0 disables
// both. Relative paths and world-writable directories are refused with a
// warning, and the environment is ignored in setuid/setgid processes.
//
// Thread-safety: all functions are thread-safe; loads are serialised.
// Lifetime: loaded plugins are never unloaded (their hooks live forever).
#pragma once

#include <string>
#include <vector>

#include "accel/device_type.h"
#include "accel/export.h"
#include "accel/version.h"

namespace accel {

enum class PluginStatus {
  Loaded,           // registered its backend
  NotFound,         // no such file
  Refused,          // path refused (relative, world-writable dir, setuid)
  OpenFailed,       // dlopen failed; detail holds dlerror()
  NotAPlugin,       // no entry symbol
  VersionMismatch,  // API version handshake failed
  InitFailed,       // the register function threw
  Duplicate,        // its device type already had a backend
  NoDevices,        // loaded, but the backend reports zero devices
  AlreadyLoaded,    // same file loaded before; nothing done
};

// "loaded", "not found", ...
ACCEL_API std::string_view pluginStatusName(PluginStatus status) noexcept;

struct PluginRecord {
  std::string path;                    // as given, or as found in a directory
  std::string source;                  // "loadBackend", "ACCEL_PLUGINS", "ACCEL_PLUGIN_PATH"
  PluginStatus status = PluginStatus::NotFound;
  std::string detail;                  // the reason, in words
  std::vector<DeviceType> registered;  // device types it registered
  std::string plugin_name;             // what the plugin calls itself
  std::string plugin_version;
};

// Loads the plugin at `path`. Returns the record (also kept in the report).
// Throws InvalidArgument/NotAvailable/... naming the path and the reason for
// every status other than Loaded, NoDevices and AlreadyLoaded, so that a
// caller who asked for a plugin explicitly cannot miss a failure; the
// process keeps working either way.
ACCEL_API PluginRecord loadBackend(const std::string& path);

// Runs the environment-driven autoload once per process (later calls do
// nothing) and returns the records it produced. Never throws.
ACCEL_API std::vector<PluginRecord> autoloadPlugins() noexcept;

// Every load attempt so far, in order.
ACCEL_API std::vector<PluginRecord> pluginReport();

}  // namespace accel
