// PluginSetup: how the accel tool finds backends before any command runs.
//
// In order: the environment-driven autoload (ACCEL_PLUGINS, ACCEL_PLUGIN_PATH,
// ACCEL_AUTOLOAD, see accel/plugin.h); then, only when ACCEL_PLUGIN_PATH is
// unset (and autoload is neither disabled nor ignored), the directories next
// to the executable, so that a tool run from a build tree or an install
// prefix finds libaccel_openreg.so without configuration; then each
// --plugin path, loaded with loadBackend.
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

// The directories next to the running executable that may hold plugins:
// its own, ../lib and ../<install libdir>, those that exist, without
// duplicates. Empty if /proc/self/exe cannot be read.
[[nodiscard]] std::vector<std::string> directoriesNearExecutable();

// Runs the steps above. Never throws for a plugin that does not load: the
// failure is in the PluginSetup (and in pluginReport()).
[[nodiscard]] PluginSetup setUpPlugins(const std::vector<std::string>& pluginPaths);

}  // namespace accel::tool
