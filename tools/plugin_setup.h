// PluginSetup: how the accel tool finds backends before any command runs.
//
// In order: the core's discovery rule (accel::discoverPlugins: the
// environment-driven autoload, then, only when ACCEL_PLUGIN_PATH is unset and
// autoload is neither disabled nor ignored, the directory holding libaccel.so,
// where the build and `cmake --install` put the plugins), the same rule
// `import accel` follows, so both see the same backends; then each --plugin
// path, loaded with loadBackend.
//
// Thread-safety: call from the main thread before a command runs.
#pragma once

#include <string>
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
};

// Runs the steps above. Never throws for a plugin that does not load: the
// failure is in the PluginSetup (and in pluginReport()).
[[nodiscard]] PluginSetup setUpPlugins(const std::vector<std::string>& pluginPaths);

}  // namespace accel::tool
