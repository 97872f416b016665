// The autoload policy: which plugins the environment asks for, which of
// them may be trusted, and the once-per-process run.
#include <dirent.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "accel/error.h"
#include "accel/plugin.h"
#include "hooks/enum_names.h"
#include "plugins/plugin_loading.h"
#include "plugins/plugin_report.h"

namespace accel {
namespace {

using detail::kPluginFilePrefix;
using detail::kPluginFileSuffix;

struct AutoloadOnce {
  std::once_flag once;
  std::atomic<AutoloadState> state{AutoloadState::NotRun};
};

// Leaked: absent-backend errors read the state during static destruction.
AutoloadOnce& autoloadOnce() {
  static auto* state = new AutoloadOnce();
  return *state;
}

std::string dirName(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

PluginRecord refusedRecord(std::string path, std::string source, std::string why) {
  PluginRecord r;
  r.path = std::move(path);
  r.source = std::move(source);
  r.status = PluginStatus::Refused;
  r.detail = std::move(why);
  detail::warnOnce(r.source + "\n" + r.path,
                   detail::concat(r.source, ": refused '", r.path, "': ", r.detail));
  detail::recordPluginAttempt(r);
  return r;
}

// Loads one autoload candidate, reporting a failure on stderr (once per file).
void autoloadFile(const std::string& path, const std::string& source,
                  std::vector<PluginRecord>& out) {
  // Registered, not discovered: importing accel touches no device.
  PluginRecord r = detail::loadAndRecord(path, source, detail::DeviceCheck::Skip);
  if (!pluginStatusIsSuccess(r.status)) {
    detail::warnOnce(source + "\n" + r.path,
                     detail::concat(source, ": ", describePluginRecord(r)));
  }
  out.push_back(std::move(r));
}

// The canonical path of `path` (symlinks, "." and ".." resolved), or nullopt
// when it cannot be resolved (the load that follows reports why).
std::optional<std::string> resolvedPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  std::free(resolved);
  return out;
}

enum class Checked { File, ScannedDirectory, FileDirectory };

// Why autoload must not trust `path` (already resolved), with `st` its stat;
// empty when it may. Trusted: owned by this user or root, and writable by
// nobody else, so that no other user can choose the code that runs.
std::string distrust(const std::string& path, const struct stat& st, Checked what) {
  std::string subject = what == Checked::File ? std::string("the file ")
                        : what == Checked::ScannedDirectory
                            ? std::string("the directory ")
                            : std::string("its directory ");
  subject += path;
  std::string_view harm = what == Checked::File               ? "replace the code"
                          : what == Checked::ScannedDirectory ? "add a plugin to it"
                                                              : "replace the file";
  uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return detail::concat(subject, " is owned by uid ", st.st_uid,
                          ", neither this user (uid ", me,
                          ") nor root, so its owner could ", harm,
                          "; chown it, or load it with loadBackend()");
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    return detail::concat(subject, " is world-writable; anyone could ", harm,
                          " (chmod o-w ", path, ")");
  }
  if ((st.st_mode & S_IWGRP) != 0) {
    return detail::concat(subject, " is group-writable; other members of group ",
                          st.st_gid, " could ", harm, " (chmod g-w ", path, ")");
  }
  return {};
}

// Why the plugin file `resolved` (and the directory holding it) must not be
// trusted; empty when it may, or when it cannot be stat()ed (the load
// reports that).
std::string distrustFile(const std::string& resolved) {
  struct stat st {};
  if (::stat(resolved.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return {};
  if (std::string why = distrust(resolved, st, Checked::File); !why.empty()) return why;
  std::string dir = dirName(resolved);
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0) return {};
  return distrust(dir, dir_st, Checked::FileDirectory);
}

// Refuses `item` of `source`'s list, recording why, if it is relative: the
// current directory must not choose the code that runs. `kind` is what the
// item is ("path"), `listed` what the list holds ("plugins").
bool refusedAsRelative(const std::string& item, const std::string& source,
                       std::string_view kind, std::string_view listed,
                       std::vector<PluginRecord>& out) {
  if (item.front() == '/') return false;
  out.push_back(refusedRecord(
      item, source,
      detail::concat("relative ", kind, "; list ", listed,
                     " by absolute path, so that the current directory cannot choose "
                     "the code that runs")));
  return true;
}

void autoloadListedFiles(const std::string& list, std::vector<PluginRecord>& out) {
  const std::string source = "ACCEL_PLUGINS";
  for (const std::string& item : splitList(list)) {
    if (refusedAsRelative(item, source, "path", "plugins", out)) continue;
    std::optional<std::string> resolved = resolvedPath(item);
    if (!resolved) {
      autoloadFile(item, source, out);  // not found or unreadable: the record says which
      continue;
    }
    if (std::string why = distrustFile(*resolved); !why.empty()) {
      out.push_back(refusedRecord(item, source, std::move(why)));
      continue;
    }
    // The file checked is the file loaded, whatever the symlinks do meanwhile.
    autoloadFile(*resolved, source, out);
  }
}

void autoloadScannedDirectories(const std::string& list, const std::string& source,
                                std::vector<PluginRecord>& out) {
  for (const std::string& listed : splitList(list)) {
    if (refusedAsRelative(listed, source, "directory", "plugin directories", out))
      continue;
    std::optional<std::string> dir = resolvedPath(listed);
    struct stat st {};
    if (!dir || ::stat(dir->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      PluginRecord r;
      r.path = listed;
      r.source = source;
      r.status = PluginStatus::NotFound;
      r.detail = "no such directory";
      detail::warnOnce(source + "\n" + listed,
                       detail::concat(source, ": ", describePluginRecord(r)));
      detail::recordPluginAttempt(r);
      out.push_back(std::move(r));
      continue;
    }
    if (std::string why = distrust(*dir, st, Checked::ScannedDirectory); !why.empty()) {
      out.push_back(refusedRecord(listed, source, std::move(why)));
      continue;
    }
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir->c_str())) {
      while (const struct dirent* entry = ::readdir(d)) {
        std::string_view name = entry->d_name;
        if (name.size() > kPluginFilePrefix.size() + kPluginFileSuffix.size() &&
            name.starts_with(kPluginFilePrefix) && name.ends_with(kPluginFileSuffix)) {
          names.emplace_back(name);
        }
      }
      ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    std::string prefix = dir->back() == '/' ? *dir : *dir + "/";
    for (const std::string& name : names) {
      std::string path = prefix + name;
      std::optional<std::string> resolved = resolvedPath(path);  // a symlink may lead out
      struct stat file_st {};
      if (!resolved || ::stat(resolved->c_str(), &file_st) != 0 ||
          S_ISDIR(file_st.st_mode)) {
        continue;
      }
      if (std::string why = distrustFile(*resolved); !why.empty()) {
        out.push_back(refusedRecord(path, source, std::move(why)));
        continue;
      }
      autoloadFile(*resolved, source, out);
    }
  }
}

std::vector<PluginRecord> runAutoload(const AutoloadConfig& config,
                                      AutoloadState* state) {
  std::vector<PluginRecord> out;
  if (config.secure) {
    if (state != nullptr) *state = AutoloadState::IgnoredSecure;
    const std::string why =
        "ignored: the process runs setuid/setgid (AT_SECURE), so the environment may "
        "come "
        "from another user";
    if (config.plugins)
      out.push_back(refusedRecord(*config.plugins, "ACCEL_PLUGINS", why));
    if (config.plugin_path) {
      out.push_back(refusedRecord(*config.plugin_path, "ACCEL_PLUGIN_PATH", why));
    }
    return out;
  }
  if (config.autoload && *config.autoload == "0") {
    if (state != nullptr) *state = AutoloadState::Disabled;
    return out;
  }
  if (state != nullptr) *state = AutoloadState::Ran;
  if (config.plugins) autoloadListedFiles(*config.plugins, out);
  if (config.plugin_path) {
    autoloadScannedDirectories(*config.plugin_path, "ACCEL_PLUGIN_PATH", out);
  }
  return out;
}

}  // namespace

AutoloadConfig autoloadConfigFromEnvironment() noexcept {
  AutoloadConfig config;
  try {
    config.secure = ::getauxval(AT_SECURE) != 0;
    // Read even when secure, so that the refusal can say what was ignored.
    if (const char* v = std::getenv("ACCEL_PLUGINS")) config.plugins = v;
    if (const char* v = std::getenv("ACCEL_PLUGIN_PATH")) config.plugin_path = v;
    if (const char* v = std::getenv("ACCEL_AUTOLOAD")) config.autoload = v;
  } catch (...) {
    bool secure = config.secure;
    config = AutoloadConfig{};
    config.secure = secure;
  }
  return config;
}

std::vector<PluginRecord> autoloadPlugins() noexcept {
  if (detail::isLoadingOnThisThread()) return {};
  std::vector<PluginRecord> out;
  try {
    AutoloadOnce& s = autoloadOnce();
    std::call_once(s.once, [&] {
      AutoloadState state = AutoloadState::Ran;
      try {
        out = runAutoload(autoloadConfigFromEnvironment(), &state);
      } catch (...) {
      }
      s.state.store(state, std::memory_order_release);
    });
  } catch (...) {
  }
  return out;
}

std::vector<PluginRecord> autoloadPlugins(const AutoloadConfig& config) noexcept {
  if (detail::isLoadingOnThisThread()) return {};
  try {
    return runAutoload(config, nullptr);
  } catch (...) {
    return {};
  }
}

namespace detail {

std::vector<PluginRecord> autoloadDirectories(const std::string& directories,
                                              const std::string& source) noexcept {
  if (isLoadingOnThisThread()) return {};
  std::vector<PluginRecord> out;
  try {
    autoloadScannedDirectories(directories, source, out);
  } catch (...) {
    // Allocation failure: what was found so far is recorded in the report.
  }
  return out;
}

}  // namespace detail

AutoloadState autoloadState() noexcept {
  return autoloadOnce().state.load(std::memory_order_acquire);
}

namespace {

constexpr detail::EnumNames<AutoloadState::IgnoredSecure> kAutoloadStateNames{
    "not run", "ran", "disabled by ACCEL_AUTOLOAD=0", "ignored (setuid/setgid process)"};

}  // namespace

std::string_view autoloadStateName(AutoloadState state) noexcept {
  return kAutoloadStateNames[state];
}

}  // namespace accel
