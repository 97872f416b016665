#include "plugin_setup.h"

#include "isolated_discovery.h"

namespace accel::tool {

PluginSetup setUpPlugins(const std::vector<std::string>& pluginPaths, bool isolate) {
  PluginSetup setup;
  setup.defaultDirectories = discoverPlugins().default_directories;

  for (const std::string& path : pluginPaths) {
    if (isolate) {
      IsolatedDiscovery load = loadPluginInChild(path);
      if (!load.safe && !load.not_run) {
        setup.errors.push_back(path + ": " + load.problem);
        setup.failedInSeparateProcess.emplace_back(path, load.problem);
        continue;
      }
    }
    setup.pluginsForSeparateProcesses.push_back(path);
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
