// Backend plugins, the host's side: loading a backend's shared library at run
// time, the autoload policy, and the report of every plugin the process tried
// to load.
//
//   accel::PluginRecord r = accel::loadBackend("/opt/vendor/lib/libaccel_npu.so");
//
// A plugin is a shared library that exports one C function,
// accel_plugin_negotiate: the entry of the C plugin ABI (accel/plugin_abi.h,
// docs/plugin-abi.md; plugin authors in C++ write it with
// accel/plugin_adapter.h's ACCEL_DEFINE_PLUGIN_ADAPTER).
//
// loadBackend(path) refuses anything that is not a regular file (a FIFO would
// block dlopen forever), dlopens the file (RTLD_NOW | RTLD_LOCAL), finds the
// entry in that very file, negotiates a plugin API version both sides speak,
// and only then lets the plugin register its backends, into a Registrar
// (registrar.h) whose origin is "plugin <path>". The loader commits the
// registrar to the process hooks table when registration succeeded, and
// drops it whole otherwise: a failed load registers nothing. The record
// lists exactly the types the registrar committed. A file that exports only
// the retired C++ entry (accel_plugin_entry_v2, or API 1's
// accel_plugin_entry_v1) is refused with VersionMismatch, telling its author
// to rebuild it against the C plugin ABI; nothing in it is called. Static
// registrations (ACCEL_REGISTER_HOOKS) in a library that links the core are
// a program's: they register as the library is opened, outside any load.
//
// Every attempt, failed or not, is recorded as a PluginRecord; pluginReport()
// returns them for `accel info`, and the absent-backend errors (getHooks(t)
// for a type without a backend) quote the records that explain why t has none.
//
// A failed load leaves the process working. Libraries are never dlclose()d,
// not even after a failed load: code in them may still be referenced (a
// registrar kept for a clear error on late use, a static object).
//
// Autoload, run once per process by the first autoloadPlugins() call
// (Context::lazyInitDevice and the `accel` tool make that call):
//  - ACCEL_PLUGINS: ':'-separated list of plugin files, loaded in order;
//  - ACCEL_PLUGIN_PATH: ':'-separated list of directories; each is scanned
//    for files named libaccel_*.so, loaded in name order;
//  - ACCEL_AUTOLOAD=0 disables both.
// Each candidate is resolved with realpath() first and loaded by that path.
// Refused, with a one-line warning on stderr once per item per process: a
// relative path; a (resolved) file, its directory, or a scanned directory that
// is group- or world-writable or owned by neither this user (geteuid()) nor
// root. In a setuid/setgid process (getauxval(AT_SECURE)) the environment is
// ignored altogether. Autoload failures are also reported on stderr, one line
// each: the user asked for these plugins through the environment and must see
// why not.
//
// Thread-safety: all functions are thread-safe. Loads are serialised; the
// report may be read during a load. A plugin's register_backends must not
// call loadBackend() (it is refused: it would wait for itself), and its
// autoloadPlugins() calls return at once.
// Lifetime: loaded plugins are never unloaded; their hooks live forever.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device_type.h"
#include "accel/error.h"
#include "accel/export.h"
#include "accel/plugin_abi.h"

namespace accel {

// ---- Loading and diagnostics ----

// A new value goes last and is named in src/core/plugins/plugin_report.cpp's table.
enum class PluginStatus {
  Loaded,           // registered its backend(s)
  NotFound,         // no such file or directory
  Refused,          // refused by autoload: relative path, writable by others, setuid
  OpenFailed,       // not a regular file, truncated, or dlopen failed (dlerror())
  NotAPlugin,       // the file has no accel_plugin_negotiate of its own
  VersionMismatch,  // no plugin API both speak, or the retired C++ entry
  InitFailed,     // the entry or register_backends failed or threw, or registered nothing
  Duplicate,      // a device type it registers already had a backend
  NoDevices,      // loaded, but a backend it registered reports zero devices
  AlreadyLoaded,  // this file was loaded before; nothing done
};

// "loaded", "not found", "refused", "open failed", "not a plugin",
// "version mismatch", "init failed", "duplicate", "no devices",
// "already loaded". Never throws.
ACCEL_API std::string_view pluginStatusName(PluginStatus status) noexcept;

// True for Loaded, NoDevices and AlreadyLoaded: the plugin's backends are
// registered. Never throws.
ACCEL_API bool pluginStatusIsSuccess(PluginStatus status) noexcept;

struct PluginRecord {
  std::string path;    // absolute: as given, or as found in a directory
  std::string source;  // "loadBackend", "ACCEL_PLUGINS", "ACCEL_PLUGIN_PATH"
  PluginStatus status = PluginStatus::NotFound;
  std::string detail;                  // the reason, in words (empty when Loaded)
  std::vector<DeviceType> registered;  // device types it registered
  std::string plugin_name;             // what the plugin calls itself
  std::string plugin_version;          // the plugin's own version string
  // A C plugin's (accel/plugin_abi.h) API versions, as
  // ACCEL_PLUGIN_ABI_VERSION numbers; 0 when unknown or not a C plugin: the
  // newest and the oldest it speaks, and the one it and the core agreed on
  // (0 when they found none).
  std::uint32_t abi_newest = 0;
  std::uint32_t abi_oldest = 0;
  std::uint32_t abi_negotiated = 0;
};

// One line: "<path>: <status>[: <detail>] (registered: a, b)". Never throws
// except std::bad_alloc.
ACCEL_API std::string describePluginRecord(const PluginRecord& record);

// Thrown by loadBackend for a plugin that did not load. It is a NotAvailable
// (its backend is not available), and carries the full record.
class ACCEL_API PluginLoadError : public NotAvailable {
 public:
  PluginLoadError(PluginRecord record, std::string message,
                  std::source_location where = std::source_location::current());
  ~PluginLoadError() override;
  [[nodiscard]] const PluginRecord& record() const noexcept { return record_; }

 private:
  PluginRecord record_;
};

// Loads the plugin at `path` and returns its record (also kept in the report).
// A relative path is taken relative to the current directory (the dynamic
// linker's search path is never used). Loading a file that loaded before
// returns AlreadyLoaded and does nothing; a file whose earlier load failed is
// tried again. Throws PluginLoadError naming the path and the reason for every
// status other than Loaded, NoDevices and AlreadyLoaded, so that a caller who
// asked for a plugin explicitly cannot miss a failure; the process keeps
// working either way. Throws InvalidArgument when called from a plugin's
// register_backends or static initialiser. Thread-safe; loads are serialised.
ACCEL_API PluginRecord loadBackend(const std::string& path);

// The autoload settings, as read from the environment (or made up by a caller).
struct AutoloadConfig {
  std::optional<std::string> plugins;      // ACCEL_PLUGINS
  std::optional<std::string> plugin_path;  // ACCEL_PLUGIN_PATH
  std::optional<std::string> autoload;     // ACCEL_AUTOLOAD; "0" disables
  bool secure = false;                     // getauxval(AT_SECURE) != 0: ignore the rest
};

// The process's ACCEL_PLUGINS, ACCEL_PLUGIN_PATH, ACCEL_AUTOLOAD and
// AT_SECURE flag. Never throws (an allocation failure gives an empty config).
ACCEL_API AutoloadConfig autoloadConfigFromEnvironment() noexcept;

// Runs the environment-driven autoload once per process (later calls, and
// calls from inside a plugin's register_backends, do nothing and return an
// empty vector) and returns the records it produced. Concurrent first callers
// wait until the autoload is finished. Never throws; failures are recorded and
// printed on stderr.
ACCEL_API std::vector<PluginRecord> autoloadPlugins() noexcept;

// Runs the autoload logic for `config` now, whether or not the once-per-process
// autoload ran (for programs with their own plugin settings, and for tests).
// Same refusals, warnings and records as the environment-driven autoload.
// Never throws.
ACCEL_API std::vector<PluginRecord> autoloadPlugins(
    const AutoloadConfig& config) noexcept;

// A new value goes last and is named in src/core/plugins/plugin_autoload.cpp's table.
enum class AutoloadState {
  NotRun,         // autoloadPlugins() was not called yet
  Ran,            // ran (whether or not any plugin was listed)
  Disabled,       // ACCEL_AUTOLOAD=0
  IgnoredSecure,  // setuid/setgid process: environment ignored
};
// Where the once-per-process autoload stands. Never throws.
ACCEL_API AutoloadState autoloadState() noexcept;
// "not run", "ran", "disabled by ACCEL_AUTOLOAD=0", "ignored (setuid/setgid process)".
ACCEL_API std::string_view autoloadStateName(AutoloadState state) noexcept;

// Every load attempt so far, in order (autoload and loadBackend alike).
// Thread-safe; throws only std::bad_alloc.
ACCEL_API std::vector<PluginRecord> pluginReport();

// The record of the successful load that registered `type`, or nullopt
// (a built-in, statically linked or unregistered type). Thread-safe.
ACCEL_API std::optional<PluginRecord> pluginForDeviceType(DeviceType type);

// ---- discovery: the rule hosts share ----
// The accel tool and the Python package find backends the same way, so that
// `accel info` and `import accel` see the same ones:
//  1. the environment's autoload (autoloadPlugins(): ACCEL_PLUGINS,
//     ACCEL_PLUGIN_PATH, ACCEL_AUTOLOAD=0);
//  2. only when ACCEL_PLUGIN_PATH is unset and autoload is neither disabled
//     nor ignored (setuid), defaultPluginDirectories(), scanned with the
//     same trust checks, warnings and records as an ACCEL_PLUGIN_PATH entry.
// Context::lazyInitDevice runs step 1 only: a program embedding the core
// chooses whether to discover (call discoverPlugins() at start-up).
// Which of the backends found is the current accelerator: Context.

// The directory holding the core library (libaccel.so, symlinks resolved):
// where the build and `cmake --install` put the backend plugins, and where a
// wheel keeps them. Empty if it cannot be told. Throws only std::bad_alloc.
ACCEL_API std::vector<std::string> defaultPluginDirectories();

struct PluginDiscovery {
  // The directories step 2 searched (empty when it did not run).
  std::vector<std::string> default_directories;
  // This call's load records (steps 1 and 2 each run once per process: a
  // later call returns none; pluginReport() has them all).
  std::vector<PluginRecord> records;
};

// Runs the two steps above. Thread-safe; never throws (failures are in the
// records, the report and on stderr, as for the autoload).
ACCEL_API PluginDiscovery discoverPlugins() noexcept;

}  // namespace accel
