// The discovery rule the hosts share (accel/plugin.h, discoverPlugins): the
// environment's autoload, then the core library's own directory.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "accel/plugin.h"
#include "plugin_loading.h"

namespace accel {
namespace {

std::string parentDirectory(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::vector<std::string> defaultPluginDirectories() {
  // The file this function's code came from: libaccel.so wherever the host
  // found it (build tree, install prefix, inside a Python wheel), resolved so
  // that the versioned file's directory is the one searched.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&defaultPluginDirectories), &info) == 0 ||
      info.dli_fname == nullptr || info.dli_fname[0] == '\0') {
    return {};
  }
  char* resolved = ::realpath(info.dli_fname, nullptr);
  if (resolved == nullptr) return {};
  std::string library(resolved);
  std::free(resolved);
  return {parentDirectory(library)};
}

namespace {

// The source of the plugins found by the default search, as `accel info`
// and the plugin report show it.
const char* const kDefaultPluginSource = "libaccel's directory";

}  // namespace

PluginDiscovery discoverPlugins() noexcept {
  PluginDiscovery out;
  try {
    out.records = autoloadPlugins();
    const AutoloadConfig env = autoloadConfigFromEnvironment();
    const bool disabled = env.secure || (env.autoload && *env.autoload == "0");
    if (env.plugin_path || disabled) return out;
    out.default_directories = defaultPluginDirectories();
    if (out.default_directories.empty()) return out;
    static auto* once = new std::once_flag();  // never destroyed
    std::call_once(*once, [&] {
      // The same scan, trust checks and records as ACCEL_PLUGIN_PATH's,
      // named for where they come from.
      std::string near;
      for (const std::string& dir : out.default_directories) {
        if (!near.empty()) near += ':';
        near += dir;
      }
      std::vector<PluginRecord> found =
          detail::autoloadDirectories(near, kDefaultPluginSource);
      out.records.insert(out.records.end(), std::make_move_iterator(found.begin()),
                         std::make_move_iterator(found.end()));
    });
  } catch (...) {
    // Allocation failure: what was found so far is recorded in the report.
  }
  return out;
}

}  // namespace accel
