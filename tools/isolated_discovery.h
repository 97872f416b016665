// Discovering a backend in a separate process, so that a driver that crashes
// while loading or listing devices (SIGSEGV, abort) takes that process down
// and not `accel info` or `accel check` (docs/lifecycle.md, "Discovery").
//
// The parent runs this executable again (/proc/self/exe) as
// `accel info --discover-backend NAME [--plugin PATH]...`, an internal form
// of `accel info` that prints one backend's report as JSON on stdout and
// exits (or `accel info --load-plugin PATH`, which loads one plugin
// explicitly, as `--plugin` does, and prints what it registered); it waits for it at most
// ACCEL_DISCOVERY_TIMEOUT plus a grace, then kills and reaps it. The child bounds the
// discovery itself too (the library's watchdog), so a driver that hangs is normally
// reported by the child, with the library's own reason, before the parent has to kill it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace accel::tool {

// The internal options of `accel info` that make the process the child: one
// backend's discovery, or one --plugin path's explicit load (which asks the
// plugin's backends for their devices).
inline constexpr const char* kDiscoverBackendOption = "--discover-backend";
inline constexpr const char* kLoadPluginOption = "--load-plugin";

struct IsolatedDiscovery {
  // The child could not be started (no process, no pipe): nothing was
  // learned, and the caller discovers in its own process as before.
  bool not_run = false;
  // The child did its work without crashing, hanging or giving up; `report`
  // is the JSON it printed. When false, `problem` says why and the caller
  // must not do the same work in its own process.
  bool safe = false;
  nlohmann::ordered_json report;
  std::string problem;
};

// Discovers `backend` in a child process that loads `plugins` (and the
// autoloaded ones, from the inherited environment) first; its report is the
// backend's `accel info` JSON. A report with a discovery problem (the
// library's bound gave up in the child) is not safe either. Never throws;
// never leaves a child running or unreaped.
// Thread-safety: may be called from any thread; each call has its own child.
[[nodiscard]] IsolatedDiscovery discoverInChild(std::string_view backend,
                                                const std::vector<std::string>& plugins);

// Loads the plugin at `path` with loadBackend in a child process, which asks
// its backends for their devices; safe when that finished. Same guarantees.
[[nodiscard]] IsolatedDiscovery loadPluginInChild(const std::string& path);

// The child's side: writes `report` (one line of JSON) to stdout and ends the
// process with _exit, without running destructors or atexit handlers: a
// discovery thread that is still blocked in the driver must not keep the
// child alive or crash it on the way out.
[[noreturn]] void finishDiscoveryChild(const nlohmann::ordered_json& report, int status);

// Makes a crashing child leave no core file: the crash is reported to the
// user by the parent, with its signal. Called first thing in the child.
void prepareDiscoveryChild() noexcept;

}  // namespace accel::tool
