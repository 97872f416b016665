#include "plugin_setup.h"

namespace accel::tool {

PluginSetup setUpPlugins(const std::vector<std::string>& pluginPaths) {
  PluginSetup setup;
  setup.defaultDirectories = discoverPlugins().default_directories;

  for (const std::string& path : pluginPaths) {
    try {
      setup.explicitPlugins.push_back(loadBackend(path));
    } catch (const PluginLoadError& e) {
      setup.explicitPlugins.push_back(e.record());
      setup.errors.push_back(e.message());  // without the source location: for users
    } catch (const Error& e) {
      setup.errors.push_back(path + ": " + e.message());
    } catch (const std::exception& e) {
      setup.errors.push_back(path + ": " + e.what());
    }
  }
  return setup;
}

}  // namespace accel::tool
