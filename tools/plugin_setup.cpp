#include "plugin_setup.h"

#include <filesystem>
#include <system_error>

namespace accel::tool {

std::vector<std::string> directoriesNearExecutable() {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  fs::path bin = exe.parent_path();
  std::vector<std::string> out;
  for (const fs::path& candidate :
       {bin, bin / ".." / "lib", bin / ".." / ACCEL_TOOL_INSTALL_LIBDIR}) {
    fs::path dir = fs::weakly_canonical(candidate, error);
    if (error || !fs::is_directory(dir, error)) continue;
    std::string text = dir.string();
    bool seen = false;
    for (const std::string& known : out) seen = seen || known == text;
    if (!seen) out.push_back(std::move(text));
  }
  return out;
}

PluginSetup setUpPlugins(const std::vector<std::string>& pluginPaths) {
  PluginSetup setup;
  (void)autoloadPlugins();

  // The build-tree default goes through the same autoload logic as
  // ACCEL_PLUGIN_PATH, so the same refusals (world-writable directories)
  // apply and the records read alike.
  AutoloadConfig env = autoloadConfigFromEnvironment();
  bool disabled = env.secure || (env.autoload && *env.autoload == "0");
  if (!env.plugin_path && !disabled) {
    setup.defaultDirectories = directoriesNearExecutable();
    if (!setup.defaultDirectories.empty()) {
      AutoloadConfig near;
      near.plugin_path = "";
      for (const std::string& dir : setup.defaultDirectories) {
        if (!near.plugin_path->empty()) *near.plugin_path += ':';
        *near.plugin_path += dir;
      }
      (void)autoloadPlugins(near);
    }
  }

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
