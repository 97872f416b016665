// PluginSetup: how the accel tool finds backends before any command runs.
//
// In order: the core's discovery rule (accel::discoverPlugins: the
// environment-driven autoload, then, only when ACCEL_PLUGIN_PATH is unset and
// autoload is neither disabled nor ignored, the directory holding libaccel.so,
// where the build and `cmake --install` put the plugins), the same rule
// `import accel` follows, so both see the same backends; then each --plugin
// path, loaded with loadBackend. An explicit load asks the plugin's backends
// for their devices, so with `isolate` each --plugin path is first loaded in
// a separate process (isolated_discovery.h), and one whose load crashed, hung
// or gave up there is not loaded here.
//
// Thread-safety: call from the main thread before a command runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "accel/plugin.h"

namespace accel::tool {

struct PluginSetup {
  // Directories searched because ACCEL_PLUGIN_PATH was unset (may be empty).
  std::vector<std::string> defaultDirectories;
  // The record of each --plugin path, in order.
  std::vector<PluginRecord> explicitPlugins;
  // The error text of each --plugin path that did not load.
  std::vector<std::string> errors;
  // The --plugin paths whose load failed in the separate process (a subset
  // of the errors): path and why. They were not loaded here.
  std::vector<std::pair<std::string, std::string>> failedInSeparateProcess;
  // The --plugin paths a separate process of this one loads: all of them but
  // those above (which would crash or hang it before it got to its own work).
  std::vector<std::string> pluginsForSeparateProcesses;
};

// Runs the steps above. Never throws for a plugin that does not load: the
// failure is in the PluginSetup (and in pluginReport()).
[[nodiscard]] PluginSetup setUpPlugins(const std::vector<std::string>& pluginPaths,
                                       bool isolate = false);

}  // namespace accel::tool
