#include "accel/plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "accel/hooks_table.h"
#include "accel/registry.h"
#include "registration_capture.h"

namespace accel {
namespace {

constexpr std::string_view kPluginFilePrefix = "libaccel_";
constexpr std::string_view kPluginFileSuffix = ".so";

// A file that loaded successfully, so that loading it again (by any path)
// does nothing.
struct LoadedFile {
  dev_t device;
  ino_t inode;
  void* handle;
  PluginRecord record;
};

struct LoaderState {
  // Serialises loads. Held while plugin code runs, so nothing that plugin
  // code may reach (the report, the hint) takes it.
  std::mutex load_mutex;
  // Guards the fields below; held only for copies, never while calling out.
  std::mutex records_mutex;
  std::vector<PluginRecord> records;
  std::vector<LoadedFile> loaded;
  // Every handle dlopen gave the loader, failed loads included (load_mutex).
  std::set<void*> opened;
  std::set<std::string> warned;

  std::once_flag autoload_once;
  std::atomic<AutoloadState> autoload_state{AutoloadState::NotRun};
};

// Leaked on purpose: plugins may be loaded from static initialisers of the
// program and absent-backend errors may be raised during static destruction.
LoaderState& loader() {
  static LoaderState* state = new LoaderState();
  return *state;
}

// Set while this thread runs a plugin's static initialisers, entry function,
// register function or hooks factory. Trivial types: no TLS destructors.
thread_local int t_loading_depth = 0;
thread_local const std::string* t_loading_path = nullptr;

class LoadingScope {
 public:
  explicit LoadingScope(const std::string& path) noexcept : previous_(t_loading_path) {
    ++t_loading_depth;
    t_loading_path = &path;
  }
  ~LoadingScope() {
    --t_loading_depth;
    t_loading_path = previous_;
  }
  LoadingScope(const LoadingScope&) = delete;
  LoadingScope& operator=(const LoadingScope&) = delete;

 private:
  const std::string* previous_;
};

void warnOnce(const std::string& key, const std::string& message) noexcept {
  try {
    LoaderState& s = loader();
    {
      std::lock_guard<std::mutex> lock(s.records_mutex);
      if (!s.warned.insert(key).second) return;
    }
    std::fprintf(stderr, "accelhooks: %s\n", message.c_str());
  } catch (...) {
  }
}

std::string absolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::string cwd(4096, '\0');
  while (::getcwd(cwd.data(), cwd.size()) == nullptr) {
    if (errno != ERANGE) return path;  // the stat below reports the problem
    cwd.resize(cwd.size() * 2);
  }
  cwd.resize(std::strlen(cwd.c_str()));
  if (path.rfind("./", 0) == 0) return cwd + path.substr(1);
  return cwd + "/" + path;
}

std::string typeList(const std::vector<DeviceType>& types) {
  std::string out;
  for (DeviceType t : types) {
    if (!out.empty()) out += ", ";
    out += deviceTypeName(t);
  }
  return out;
}

std::string baseName(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
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

// dlsym(handle) also searches the library's dependencies; an entry found
// there belongs to another plugin, and this file is not a plugin itself.
bool symbolBelongsTo(void* symbol, void* handle) {
  Dl_info info{};
  if (::dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return false;
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr) {
    return false;
  }
  return std::strcmp(info.dli_fname, map->l_name) == 0;
}

std::string coreDescription() {
  return detail::concat("this libaccel.so (", libraryVersion(),
                        ") implements plugin API ", libraryPluginApiVersion());
}

// Returns the reason the handshake fails, or empty when the versions agree.
std::string checkVersions(const PluginEntry& entry, const PluginRecord& record) {
  std::string who =
      detail::concat("the plugin '", record.plugin_name, "' ", record.plugin_version);
  if (entry.api_version < kOldestSupportedPluginApiVersion) {
    return detail::concat(who, " was built for plugin API ", entry.api_version,
                          ", but this libaccel.so (", libraryVersion(),
                          ") loads plugin API ", kOldestSupportedPluginApiVersion, " to ",
                          libraryPluginApiVersion(),
                          "; rebuild the plugin against accelhooks ", libraryVersion());
  }
  if (entry.min_core_api_version > libraryPluginApiVersion()) {
    return detail::concat(
        who, " (built for plugin API ", entry.api_version,
        ") needs a core implementing plugin API ", entry.min_core_api_version,
        " or later, but ", coreDescription(),
        "; use a newer accelhooks or rebuild the plugin against accelhooks ",
        libraryVersion());
  }
  return {};
}

// Queues the static registrations (ACCEL_REGISTER_HOOKS) that run on this
// thread while it lives, i.e. inside dlopen; the loader commits them only
// after the version handshake. Ends the capture on every path out.
class StaticRegistrationCapture {
 public:
  StaticRegistrationCapture() noexcept { detail::beginHooksRegistrationCapture(); }
  ~StaticRegistrationCapture() { (void)finish(); }
  StaticRegistrationCapture(const StaticRegistrationCapture&) = delete;
  StaticRegistrationCapture& operator=(const StaticRegistrationCapture&) = delete;
  // Stops capturing; returns the queue (empty on later calls).
  std::vector<detail::PendingHooksRegistration> finish() noexcept {
    if (!active_) return {};
    active_ = false;
    return detail::endHooksRegistrationCapture();
  }

 private:
  bool active_ = true;
};

void addType(std::vector<DeviceType>& types, DeviceType t) {
  if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
}

// Registers the queued static registrations of a plugin that passed the
// handshake, adding the types now served by its factories to
// record.registered. Returns Loaded, or the status of the first failure
// (whose reason goes to record.detail); later items are still tried.
PluginStatus commitStaticRegistrations(
    std::vector<detail::PendingHooksRegistration> pending, PluginRecord& record) {
  PluginStatus status = PluginStatus::Loaded;
  for (detail::PendingHooksRegistration& p : pending) {
    PluginStatus failed = PluginStatus::InitFailed;
    std::string why;
    try {
      registerHooksFactory(p.type_name, std::move(p.factory), p.priority);
      RegistryPriority active{};
      // A factory of higher priority already there keeps the type.
      if (hooksRegistry().priorityOf(p.type_name, active) && active == p.priority) {
        addType(record.registered, deviceTypeFromName(p.type_name));
      }
      continue;
    } catch (const DuplicateRegistration& e) {
      failed = PluginStatus::Duplicate;
      why = detail::concat("its static registration of '", p.type_name,
                           "' was refused: ", e.message());
    } catch (const std::exception& e) {
      why = detail::concat("its static registration of '", p.type_name,
                           "' failed: ", e.what());
    }
    if (status == PluginStatus::Loaded) {
      status = failed;
      record.detail = std::move(why);
    }
  }
  return status;
}

// Whether a device type that became registered while this thread ran the
// register function of the plugin at `path` was registered by it. registerHooks
// names the registering plugin in the origin when it gets none ("plugin
// <path>", from loadingPluginPath(), which is per thread), and names no plugin
// ("registerHooks()") on a thread that loads none: those origins are certain.
// Any other origin (one the caller chose, or a factory's) cannot be traced to
// a thread and is taken to be the plugin's: loads are serialised, so no other
// plugin registers meanwhile.
bool registeredByThisLoad(DeviceType type, const std::string& path) {
  std::string origin = hooksOrigin(type);
  if (origin == "plugin " + path) return true;
  if (origin == "registerHooks()") return false;
  return !origin.starts_with("plugin /");
}

// Calls the register function; returns the status it earned (Loaded when it
// returned normally) and fills record.detail otherwise.
PluginStatus callRegister(void (*register_fn)(), PluginRecord& record) {
  try {
    register_fn();
    return PluginStatus::Loaded;
  } catch (const DuplicateRegistration& e) {
    record.detail = detail::concat("its registration was refused: ", e.message());
    return PluginStatus::Duplicate;
  } catch (const std::exception& e) {
    record.detail = detail::concat("its register function threw: ", e.what());
  } catch (...) {
    record.detail =
        "its register function threw an exception not derived from std::exception";
  }
  return PluginStatus::InitFailed;
}

// The message of a type whose hooks factory failed (getHooks gave the absent
// hooks): the absent hooks explain it in their error.
std::string factoryFailure(DeviceType type) {
  try {
    absentHooks(type).init();  // the absent hooks refuse it with the explanation
  } catch (const Error& e) {
    return e.message();
  } catch (...) {
  }
  return "its hooks factory failed";
}

// Everything after the path checks: dlopen, entry, handshake, register,
// diagnosis. The load mutex is held.
void attemptLoad(PluginRecord& r) {
  LoaderState& s = loader();
  struct stat st {};
  if (::stat(r.path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      r.status = PluginStatus::NotFound;
      r.detail = "no such file; give the path of the plugin's .so file";
    } else {
      r.status = PluginStatus::OpenFailed;
      r.detail = detail::concat("cannot read the file: ", std::strerror(err));
    }
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    r.status = PluginStatus::OpenFailed;
    r.detail =
        "it is a directory; list directories in ACCEL_PLUGIN_PATH, files in "
        "ACCEL_PLUGINS";
    return;
  }
  auto previous = [&](auto matches) -> std::optional<PluginRecord> {
    std::lock_guard<std::mutex> lock(s.records_mutex);
    for (const LoadedFile& f : s.loaded) {
      if (matches(f)) return f.record;
    }
    return std::nullopt;
  };
  auto markAlreadyLoaded = [&](const PluginRecord& first) {
    r.status = PluginStatus::AlreadyLoaded;
    r.detail = detail::concat("loaded before from ", first.path, "; nothing done");
    r.registered = first.registered;
    r.plugin_name = first.plugin_name;
    r.plugin_version = first.plugin_version;
    r.plugin_api_version = first.plugin_api_version;
  };
  if (auto first = previous([&](const LoadedFile& f) {
        return f.device == st.st_dev && f.inode == st.st_ino;
      })) {
    markAlreadyLoaded(*first);
    return;
  }

  // Linked into the program, or opened by another library: its backends may
  // have been registered already, by the program or by the library itself.
  // (A library the loader itself opened before, in a failed load, does not count.)
  bool resident = false;
  if (void* existing = ::dlopen(r.path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
    resident = !s.opened.contains(existing);
    ::dlclose(existing);  // drops only the reference RTLD_NOLOAD added
  }

  std::size_t static_errors_before = staticRegistrationErrors().size();
  LoadingScope scope(r.path);

  // The library's static initialisers run inside dlopen, before anything is
  // known about it: their registrations are queued, and dropped by every
  // return below that comes before the handshake has passed. (A library
  // already in the process does not run them again: the queue stays empty.)
  StaticRegistrationCapture capture;
  ::dlerror();
  void* handle = ::dlopen(r.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::vector<detail::PendingHooksRegistration> pending = capture.finish();
  if (handle == nullptr) {
    const char* error = ::dlerror();
    r.status = PluginStatus::OpenFailed;
    r.detail =
        detail::concat("dlopen failed: ", error != nullptr ? error : "unknown error",
                       " (is it a shared library for this platform, with every "
                       "library it needs findable? try `ldd ",
                       r.path, "`)");
    return;
  }
  s.opened.insert(handle);
  // Hard links and symlinks under other names reach an already-open library.
  if (auto first = previous([&](const LoadedFile& f) { return f.handle == handle; })) {
    markAlreadyLoaded(*first);
    return;
  }

  ::dlerror();
  void* symbol = ::dlsym(handle, kPluginEntrySymbol);
  if (symbol == nullptr || !symbolBelongsTo(symbol, handle)) {
    r.status = PluginStatus::NotAPlugin;
    r.detail =
        detail::concat("it does not export ", kPluginEntrySymbol,
                       ", so it is not an accelhooks plugin (plugins define their entry "
                       "with ACCEL_DEFINE_PLUGIN; see docs/writing-a-backend.md)");
    return;
  }
  const PluginEntry* entry = nullptr;
  try {
    entry = reinterpret_cast<PluginEntryFn>(symbol)();
  } catch (...) {
  }
  if (entry == nullptr) {
    r.status = PluginStatus::NotAPlugin;
    r.detail = detail::concat("its ", kPluginEntrySymbol, "() returned no entry");
    return;
  }
  r.plugin_name = entry->name != nullptr ? entry->name : "";
  r.plugin_version = entry->version != nullptr ? entry->version : "";
  r.plugin_api_version = entry->api_version;
  if (std::string mismatch = checkVersions(*entry, r); !mismatch.empty()) {
    r.status = PluginStatus::VersionMismatch;
    r.detail = std::move(mismatch);
    return;
  }

  // The handshake passed: the static registrations count now, in the order
  // they ran, before the register function (which may build on them).
  PluginStatus static_status = commitStaticRegistrations(std::move(pending), r);
  std::string static_detail = std::move(r.detail);
  r.detail.clear();

  PluginStatus status = PluginStatus::Loaded;
  if (entry->register_fn != nullptr) {
    std::vector<DeviceType> before = registeredHooksTypes();
    status = callRegister(entry->register_fn, r);
    for (DeviceType t : registeredHooksTypes()) {
      if (std::find(before.begin(), before.end(), t) == before.end() &&
          registeredByThisLoad(t, r.path)) {
        addType(r.registered, t);
      }
    }
  }
  if (status == PluginStatus::Loaded && static_status != PluginStatus::Loaded) {
    status = static_status;
    r.detail = std::move(static_detail);
  }
  // A static registration that could not even be queued reports its error there.
  std::vector<std::string> static_errors = staticRegistrationErrors();
  if (status == PluginStatus::Loaded && static_errors.size() > static_errors_before) {
    std::string joined;
    for (std::size_t i = static_errors_before; i < static_errors.size(); ++i) {
      if (!joined.empty()) joined += "; ";
      joined += static_errors[i];
    }
    status = PluginStatus::InitFailed;
    r.detail = detail::concat("its static registration failed: ", joined);
  }

  if (resident && r.registered.empty() &&
      (status == PluginStatus::Loaded || status == PluginStatus::Duplicate)) {
    // Registering again added nothing (or was refused as a duplicate of
    // itself): the backends are the ones registered when the library came in.
    status = PluginStatus::AlreadyLoaded;
    r.detail =
        "the library was already part of the process (linked into the program or opened "
        "by "
        "another library) and its backends were registered then; nothing done";
    if (std::optional<DeviceType> own = findDeviceType(r.plugin_name);
        own && isHooksRegistered(*own)) {
      r.registered.push_back(*own);
    }
  } else if (status != PluginStatus::Loaded) {
    if (!r.registered.empty()) {
      r.detail += detail::concat("; it had registered ", typeList(r.registered),
                                 " before failing, which stays registered");
    }
  } else if (r.registered.empty()) {
    status = PluginStatus::InitFailed;
    r.detail =
        "its register function returned without registering any hooks; it must call "
        "accel::registerHooks() or accel::registerHooksFactory() for its device type";
  } else {
    std::vector<DeviceType> without_devices;
    for (DeviceType t : r.registered) {
      AcceleratorHooks& hooks = getHooks(t);  // runs a registered factory now
      if (&hooks == &absentHooks(t)) {
        status = PluginStatus::InitFailed;
        r.detail = detail::concat("creating the hooks of '", deviceTypeName(t),
                                  "' failed: ", factoryFailure(t));
        break;
      }
      if (hooks.deviceCount() == 0) without_devices.push_back(t);
    }
    if (status == PluginStatus::Loaded && !without_devices.empty()) {
      status = PluginStatus::NoDevices;
      r.detail =
          detail::concat(typeList(without_devices),
                         " reports 0 devices: the backend is registered but has no "
                         "device to run on (is the driver loaded and a device present?)");
    }
  }
  r.status = status;
  if (pluginStatusIsSuccess(status)) {
    std::lock_guard<std::mutex> lock(s.records_mutex);
    s.loaded.push_back(LoadedFile{st.st_dev, st.st_ino, handle, r});
  }
}

PluginRecord loadRecorded(const std::string& path, std::string source) {
  ACCEL_CHECK(t_loading_depth == 0, InvalidArgument, "loadBackend(\"", path,
              "\") was called while the plugin ",
              t_loading_path != nullptr ? *t_loading_path : std::string("?"),
              " is being loaded (from its static initialisers, register function or "
              "hooks factory); load plugins one after the other, from the program");
  PluginRecord r;
  r.source = std::move(source);
  r.path = absolutePath(path);
  LoaderState& s = loader();
  {
    std::lock_guard<std::mutex> load_lock(s.load_mutex);
    if (path.empty()) {
      r.status = PluginStatus::NotFound;
      r.detail = "empty path; give the path of the plugin's .so file";
    } else {
      attemptLoad(r);
    }
    std::lock_guard<std::mutex> lock(s.records_mutex);
    s.records.push_back(r);
  }
  return r;
}

PluginRecord refusedRecord(std::string path, std::string source, std::string why) {
  PluginRecord r;
  r.path = std::move(path);
  r.source = std::move(source);
  r.status = PluginStatus::Refused;
  r.detail = std::move(why);
  warnOnce(r.source + "\n" + r.path,
           detail::concat(r.source, ": refused '", r.path, "': ", r.detail));
  std::lock_guard<std::mutex> lock(loader().records_mutex);
  loader().records.push_back(r);
  return r;
}

// Loads one autoload candidate, reporting a failure on stderr (once per file).
void autoloadFile(const std::string& path, const std::string& source,
                  std::vector<PluginRecord>& out) {
  PluginRecord r = loadRecorded(path, source);
  if (!pluginStatusIsSuccess(r.status)) {
    warnOnce(source + "\n" + r.path,
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

void autoloadListedFiles(const std::string& list, std::vector<PluginRecord>& out) {
  const std::string source = "ACCEL_PLUGINS";
  for (const std::string& item : splitList(list)) {
    if (item.front() != '/') {
      out.push_back(
          refusedRecord(item, source,
                        "relative path; list plugins by absolute path, so that "
                        "the current directory cannot choose the code that runs"));
      continue;
    }
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

void autoloadScannedDirectories(const std::string& list, std::vector<PluginRecord>& out) {
  const std::string source = "ACCEL_PLUGIN_PATH";
  for (const std::string& listed : splitList(list)) {
    if (listed.front() != '/') {
      out.push_back(
          refusedRecord(listed, source,
                        "relative directory; list plugin directories by absolute "
                        "path, so that the current directory cannot choose the "
                        "code that runs"));
      continue;
    }
    std::optional<std::string> dir = resolvedPath(listed);
    struct stat st {};
    if (!dir || ::stat(dir->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      PluginRecord r;
      r.path = listed;
      r.source = source;
      r.status = PluginStatus::NotFound;
      r.detail = "no such directory";
      warnOnce(source + "\n" + listed,
               detail::concat(source, ": ", describePluginRecord(r)));
      std::lock_guard<std::mutex> lock(loader().records_mutex);
      loader().records.push_back(r);
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
  if (config.plugin_path) autoloadScannedDirectories(*config.plugin_path, out);
  return out;
}

// Appended to absent-backend errors: why no plugin provides `type`.
std::string absentBackendHint(DeviceType type) noexcept {
  try {
    std::string name(deviceTypeName(type));
    std::string expected_file =
        detail::concat(kPluginFilePrefix, name, kPluginFileSuffix);
    std::vector<PluginRecord> records = pluginReport();
    std::string out;
    std::size_t other_failures = 0;
    std::set<std::string>
        seen;  // a file tried twice is explained once, by its latest try
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
      const PluginRecord& r = *it;
      if (!seen.insert(r.path).second || pluginStatusIsSuccess(r.status)) continue;
      if (r.plugin_name == name || baseName(r.path) == expected_file) {
        out += detail::concat(
            out.empty() ? "" : " ",
            "A plugin that may provide it did not load: ", describePluginRecord(r), ".");
      } else {
        ++other_failures;
      }
    }
    if (other_failures > 0) {
      out += detail::concat(out.empty() ? "" : " ", other_failures,
                            " other plugin load(s) failed; see accel::pluginReport() or "
                            "`accel info`.");
    }
    AutoloadState state = autoloadState();
    if (state == AutoloadState::Disabled || state == AutoloadState::IgnoredSecure) {
      out += detail::concat(out.empty() ? "" : " ",
                            "Plugin autoload: ", autoloadStateName(state), ".");
    }
    if (!out.empty() && out.back() == '.')
      out.pop_back();  // the caller ends the sentence
    return out;
  } catch (...) {
    return {};
  }
}

[[maybe_unused]] const bool g_hint_installed = [] {
  setAbsentBackendHint(&absentBackendHint);
  return true;
}();

}  // namespace

std::string_view pluginStatusName(PluginStatus status) noexcept {
  switch (status) {
    case PluginStatus::Loaded:
      return "loaded";
    case PluginStatus::NotFound:
      return "not found";
    case PluginStatus::Refused:
      return "refused";
    case PluginStatus::OpenFailed:
      return "open failed";
    case PluginStatus::NotAPlugin:
      return "not a plugin";
    case PluginStatus::VersionMismatch:
      return "version mismatch";
    case PluginStatus::InitFailed:
      return "init failed";
    case PluginStatus::Duplicate:
      return "duplicate";
    case PluginStatus::NoDevices:
      return "no devices";
    case PluginStatus::AlreadyLoaded:
      return "already loaded";
  }
  return "unknown";
}

bool pluginStatusIsSuccess(PluginStatus status) noexcept {
  return status == PluginStatus::Loaded || status == PluginStatus::NoDevices ||
         status == PluginStatus::AlreadyLoaded;
}

std::string describePluginRecord(const PluginRecord& record) {
  std::string out = record.path;
  if (!record.plugin_name.empty()) {
    out +=
        detail::concat(" (", record.plugin_name, record.plugin_version.empty() ? "" : " ",
                       record.plugin_version, ")");
  }
  out += detail::concat(": ", pluginStatusName(record.status));
  if (!record.detail.empty()) out += detail::concat(": ", record.detail);
  if (!record.registered.empty())
    out += detail::concat(" [registers ", typeList(record.registered), "]");
  return out;
}

PluginLoadError::PluginLoadError(PluginRecord record, std::string message,
                                 std::source_location where)
    : NotAvailable(std::move(message), where), record_(std::move(record)) {}

PluginLoadError::~PluginLoadError() = default;

PluginRecord loadBackend(const std::string& path) {
  PluginRecord record = loadRecorded(path, "loadBackend");
  if (!pluginStatusIsSuccess(record.status)) {
    std::string message =
        detail::concat("loadBackend(\"", path, "\"): ", describePluginRecord(record));
    throw PluginLoadError(std::move(record), std::move(message));
  }
  return record;
}

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
  if (t_loading_depth > 0) return {};
  std::vector<PluginRecord> out;
  try {
    LoaderState& s = loader();
    std::call_once(s.autoload_once, [&] {
      AutoloadState state = AutoloadState::Ran;
      try {
        out = runAutoload(autoloadConfigFromEnvironment(), &state);
      } catch (...) {
      }
      s.autoload_state.store(state, std::memory_order_release);
    });
  } catch (...) {
  }
  return out;
}

std::vector<PluginRecord> autoloadPlugins(const AutoloadConfig& config) noexcept {
  if (t_loading_depth > 0) return {};
  try {
    return runAutoload(config, nullptr);
  } catch (...) {
    return {};
  }
}

AutoloadState autoloadState() noexcept {
  return loader().autoload_state.load(std::memory_order_acquire);
}

std::string_view autoloadStateName(AutoloadState state) noexcept {
  switch (state) {
    case AutoloadState::NotRun:
      return "not run";
    case AutoloadState::Ran:
      return "ran";
    case AutoloadState::Disabled:
      return "disabled by ACCEL_AUTOLOAD=0";
    case AutoloadState::IgnoredSecure:
      return "ignored (setuid/setgid process)";
  }
  return "unknown";
}

std::vector<PluginRecord> pluginReport() {
  LoaderState& s = loader();
  std::lock_guard<std::mutex> lock(s.records_mutex);
  return s.records;
}

std::optional<PluginRecord> pluginForDeviceType(DeviceType type) {
  LoaderState& s = loader();
  std::lock_guard<std::mutex> lock(s.records_mutex);
  for (const LoadedFile& f : s.loaded) {
    if (std::find(f.record.registered.begin(), f.record.registered.end(), type) !=
        f.record.registered.end()) {
      return f.record;
    }
  }
  return std::nullopt;
}

std::string loadingPluginPath() noexcept {
  try {
    return t_loading_path != nullptr ? *t_loading_path : std::string();
  } catch (...) {
    return {};
  }
}

}  // namespace accel
