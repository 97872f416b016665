// Loading one plugin file: checks on the file, dlopen, the entry (the C
// plugin ABI's, c_plugin_link.h, which negotiates and registers), the
// plugin's registrar, and the diagnosis of what the load registered. The
// autoload policy (plugin_autoload.cpp) and the report (plugin_report.cpp)
// build on it.
#include "plugins/plugin_loading.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "accel/hooks_table.h"
#include "accel/kit/library_file.h"
#include "accel/version.h"
#include "plugins/c_plugin_link.h"
#include "plugins/elf_image_check.h"
#include "plugins/plugin_report.h"

namespace accel {
namespace {

// A file that loaded successfully, so that loading it again (by any path)
// does nothing.
struct LoadedFile {
  dev_t device;
  ino_t inode;
  void* handle;
  PluginRecord record;
};

struct Loader {
  // Serialises loads. Held while plugin code runs, so nothing that plugin
  // code may reach (the report, the table) takes it.
  std::mutex load_mutex;
  // The thread holding load_mutex: a load from inside a load would wait for
  // itself, and is refused instead.
  std::atomic<std::thread::id> loading_thread{};
  std::string loading_path;  // read only by loading_thread
  // The fields below are guarded by load_mutex.
  std::vector<LoadedFile> loaded;
  // Every handle dlopen gave the loader, failed loads included.
  std::set<void*> opened;
  // Every plugin load's registrar, kept (closed) after the load: its core
  // handle points at it, and stays reachable from the plugin (the services
  // stop handing the registrar out when register_backends returns).
  std::deque<std::unique_ptr<Registrar>> registrars;
  // Every C plugin's core handle (accel/plugin_abi.h), kept for the same
  // reason: a plugin may keep it, even one whose load was refused.
  std::deque<std::unique_ptr<accel_core>> cores;
};

// Leaked on purpose: plugins may be loaded from static initialisers of the
// program, and registrars must outlive every plugin.
Loader& loader() {
  static auto* state = new Loader();
  return *state;
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

// Sets r's status and detail; returns false, for `return fail(...)`.
bool fail(PluginRecord& r, PluginStatus status, std::string detail) {
  r.status = status;
  r.detail = std::move(detail);
  return false;
}

// The file must exist and be a regular file: dlopen of a FIFO or a device
// blocks or misbehaves, and a directory is a listing mistake. An ELF file
// whose program headers point past its end would crash dlopen (SIGBUS).
bool checkFile(PluginRecord& r, struct stat& st) {
  if (::stat(r.path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return fail(r, PluginStatus::NotFound,
                  "no such file; give the path of the plugin's .so file");
    }
    return fail(r, PluginStatus::OpenFailed,
                detail::concat("cannot read the file: ", std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    return fail(r, PluginStatus::OpenFailed,
                "it is a directory; list directories in ACCEL_PLUGIN_PATH, files in "
                "ACCEL_PLUGINS");
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO (named pipe)"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                                              : "not a regular file";
    return fail(r, PluginStatus::OpenFailed,
                detail::concat("it is ", kind,
                               ", not a regular file; a plugin is a shared library "
                               "file (opening anything else could block forever)"));
  }
  // The headers are read from the file opened without blocking, and what is
  // read is what fstat() of it saw: a path swapped for a FIFO after the
  // stat() above would otherwise block the open.
  const kit::ReadOnlyFile file(r.path);
  if (file.opened() && !file.regular()) {
    return fail(r, PluginStatus::OpenFailed,
                detail::concat("it is ", file.kind(),
                               ", not a regular file; a plugin is a shared library "
                               "file (opening anything else could block forever)"));
  }
  if (std::string problem = detail::elfImageProblem(file.fd(), file.status().st_size);
      !problem.empty()) {
    return fail(r, PluginStatus::OpenFailed, std::move(problem));
  }
  return true;
}

void copyPluginFields(PluginRecord& r, const PluginRecord& first) {
  r.registered = first.registered;
  r.plugin_name = first.plugin_name;
  r.plugin_version = first.plugin_version;
}

// True (and r filled) if a successful earlier load matches.
template <typename Matches>
bool alreadyLoaded(PluginRecord& r, Matches matches) {
  for (const LoadedFile& f : loader().loaded) {
    if (!matches(f)) continue;
    copyPluginFields(r, f.record);
    fail(r, PluginStatus::AlreadyLoaded,
         detail::concat("loaded before from ", f.record.path, "; nothing done"));
    return true;
  }
  return false;
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

void* ownSymbol(void* handle, const char* name) {
  void* symbol = ::dlsym(handle, name);
  return symbol != nullptr && symbolBelongsTo(symbol, handle) ? symbol : nullptr;
}

// The entries of the retired C++ plugin mechanism (plugin API 1, and 2 to 4),
// looked for only to tell the author of such a file to rebuild it: the
// loader never calls them.
constexpr const char* kRetiredEntrySymbols[] = {"accel_plugin_entry_v2",
                                                "accel_plugin_entry_v1"};

// A file without the C entry: refused as a plugin of the retired C++ entry,
// or as no plugin at all (r filled).
void refuseWithoutEntry(void* handle, PluginRecord& r) {
  for (const char* retired : kRetiredEntrySymbols) {
    if (ownSymbol(handle, retired) == nullptr) continue;
    fail(r, PluginStatus::VersionMismatch,
         detail::concat("it exports ", retired,
                        ", the entry of the retired C++ plugin mechanism, which this "
                        "libaccel.so (",
                        libraryVersion(),
                        ") no longer loads; rebuild the plugin against the C plugin ABI: "
                        "export ",
                        ACCEL_PLUGIN_ENTRY_NAME,
                        " (ACCEL_DEFINE_PLUGIN_ADAPTER in accel/plugin_adapter.h), see "
                        "docs/plugin-abi.md"));
    return;
  }
  fail(r, PluginStatus::NotAPlugin,
       detail::concat("it does not export ", ACCEL_PLUGIN_ENTRY_NAME,
                      ", so it is not an accelhooks plugin (see docs/plugin-abi.md)"));
}

// After a commit: every type must have hooks (a factory runs now) and, if
// asked, devices.
void diagnoseBackends(PluginRecord& r, detail::DeviceCheck devices) {
  std::vector<DeviceType> without_devices;
  for (DeviceType t : r.registered) {
    AcceleratorHooks& hooks = getHooks(t);  // runs a registered factory now
    if (&hooks == &absentHooks(t)) {
      fail(r, PluginStatus::InitFailed,
           detail::concat("'", deviceTypeName(t),
                          "' is registered, but creating its hooks failed: ",
                          processHooksTable().creationError(t),
                          " (the factory runs again on the next lookup)"));
      return;
    }
    if (devices == detail::DeviceCheck::Ask && hooks.deviceCount() == 0)
      without_devices.push_back(t);
  }
  if (!without_devices.empty()) {
    fail(r, PluginStatus::NoDevices,
         detail::concat(detail::typeList(without_devices),
                        " reports 0 devices: the backend is registered but has no "
                        "device to run on (is the driver loaded and a device present?)"));
    return;
  }
  r.status = PluginStatus::Loaded;
}

// Everything after the path became absolute. The load mutex is held.
void attemptLoad(PluginRecord& r, detail::DeviceCheck devices) {
  Loader& s = loader();
  struct stat st {};
  if (!checkFile(r, st)) return;
  if (alreadyLoaded(r, [&](const LoadedFile& f) {
        return f.device == st.st_dev && f.inode == st.st_ino;
      })) {
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

  ::dlerror();
  void* handle = ::dlopen(r.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    fail(r, PluginStatus::OpenFailed,
         detail::concat("dlopen failed: ", error != nullptr ? error : "unknown error",
                        " (is it a shared library for this platform, with every library "
                        "it needs findable? try `ldd ",
                        r.path, "`)"));
    return;
  }
  s.opened.insert(handle);
  // Hard links and symlinks under other names reach an already-open library.
  if (alreadyLoaded(r, [&](const LoadedFile& f) { return f.handle == handle; })) return;
  void* entry = ownSymbol(handle, ACCEL_PLUGIN_ENTRY_NAME);
  if (entry == nullptr) {
    refuseWithoutEntry(handle, r);
    return;
  }

  // Kept for ever, closed once the load is over (see Loader::registrars).
  Registrar& registrar =
      *s.registrars.emplace_back(std::make_unique<Registrar>("plugin " + r.path));
  const bool registered = detail::loadCEntry(
      reinterpret_cast<accel_plugin_negotiate_fn>(entry),
      *s.cores.emplace_back(std::make_unique<accel_core>()), registrar, r);
  registrar.close("its register_backends returned");
  auto finish = [&] {
    registrar.drop();
    registrar.close("its plugin's load ended");
  };
  if (registered) {
    if (registrar.empty() && !resident) {
      fail(r, PluginStatus::InitFailed,
           "its register_backends returned without registering a backend; it must "
           "call the services' register_backend for its device type");
      return finish();
    }
    try {
      r.registered = registrar.commitTo(processHooksTable());
    } catch (const DuplicateRegistration& e) {
      fail(r, PluginStatus::Duplicate,
           detail::concat("its registration was refused: ", e.message()));
    }
  }
  if (resident && r.registered.empty() &&
      (registered || r.status == PluginStatus::Duplicate)) {
    // Registering again added nothing (or was refused as a duplicate of
    // itself): the backends are the ones registered when the library came in.
    fail(r, PluginStatus::AlreadyLoaded,
         "the library was already part of the process (linked into the program or "
         "opened by another library) and its backends were registered then; nothing "
         "done");
    if (std::optional<DeviceType> own = findDeviceType(r.plugin_name);
        own && isHooksRegistered(*own)) {
      r.registered.push_back(*own);
    }
  } else if (!r.registered.empty()) {
    diagnoseBackends(r, devices);
  }
  finish();
  if (pluginStatusIsSuccess(r.status)) {
    s.loaded.push_back(LoadedFile{st.st_dev, st.st_ino, handle, r});
  }
}

}  // namespace

namespace detail {

bool isLoadingOnThisThread() noexcept {
  return loader().loading_thread.load(std::memory_order_acquire) ==
         std::this_thread::get_id();
}

PluginRecord loadAndRecord(const std::string& path, std::string source,
                           DeviceCheck devices) {
  ACCEL_CHECK(!isLoadingOnThisThread(), InvalidArgument, "loadBackend(\"", path,
              "\") was called while the plugin ", loader().loading_path,
              " is being loaded (from its static initialisers or register_backends); "
              "load plugins one after the other, from the program");
  PluginRecord r;
  r.source = std::move(source);
  r.path = absolutePath(path);
  Loader& s = loader();
  {
    std::lock_guard<std::mutex> load_lock(s.load_mutex);
    s.loading_path = r.path;
    s.loading_thread.store(std::this_thread::get_id(), std::memory_order_release);
    if (path.empty()) {
      fail(r, PluginStatus::NotFound,
           "empty path; give the path of the plugin's .so file");
    } else {
      try {
        attemptLoad(r, devices);
      } catch (...) {
        s.loading_thread.store(std::thread::id(), std::memory_order_release);
        throw;  // std::bad_alloc only
      }
    }
    s.loading_thread.store(std::thread::id(), std::memory_order_release);
  }
  recordPluginAttempt(r);
  return r;
}

}  // namespace detail

namespace {

// accel_core_load_entry's load: a plugin already in the process, reached
// through its entry instead of a file. The load mutex is held.
void attemptEntryLoad(PluginRecord& r, accel_plugin_negotiate_fn entry) {
  Loader& s = loader();
  Registrar& registrar =
      *s.registrars.emplace_back(std::make_unique<Registrar>("plugin entry " + r.path));
  const bool registered = detail::loadCEntry(
      entry, *s.cores.emplace_back(std::make_unique<accel_core>()), registrar, r);
  registrar.close("its register_backends returned");
  if (registered) {
    try {
      r.registered = registrar.commitTo(processHooksTable());
      r.status = PluginStatus::Loaded;
    } catch (const DuplicateRegistration& e) {
      fail(r, PluginStatus::Duplicate,
           detail::concat("its registration was refused: ", e.message()));
    }
    if (r.status == PluginStatus::Loaded && r.registered.empty()) {
      fail(r, PluginStatus::InitFailed,
           "its register_backends returned without registering a backend");
    }
  }
  registrar.drop();
  registrar.close("its plugin's load ended");
}

}  // namespace

PluginRecord loadBackend(const std::string& path) {
  PluginRecord record =
      detail::loadAndRecord(path, "loadBackend", detail::DeviceCheck::Ask);
  if (!pluginStatusIsSuccess(record.status)) {
    std::string message =
        detail::concat("loadBackend(\"", path, "\"): ", describePluginRecord(record));
    throw PluginLoadError(std::move(record), std::move(message));
  }
  return record;
}

}  // namespace accel

extern "C" ACCEL_API accel_status accel_core_load_entry(accel_plugin_negotiate_fn entry,
                                                        const char* origin) {
  using namespace accel;
  try {
    PluginRecord r;
    r.source = "accel_core_load_entry";
    r.path = origin != nullptr ? origin : "(unnamed entry)";
    if (entry == nullptr) {
      fail(r, PluginStatus::NotAPlugin, "the entry is null");
    } else if (detail::isLoadingOnThisThread()) {
      fail(r, PluginStatus::InitFailed,
           "accel_core_load_entry was called while a plugin is being loaded; load "
           "plugins one after the other, from the program");
    } else {
      Loader& s = loader();
      std::lock_guard<std::mutex> load_lock(s.load_mutex);
      s.loading_path = r.path;
      s.loading_thread.store(std::this_thread::get_id(), std::memory_order_release);
      try {
        attemptEntryLoad(r, entry);
      } catch (...) {
        s.loading_thread.store(std::thread::id(), std::memory_order_release);
        throw;
      }
      s.loading_thread.store(std::thread::id(), std::memory_order_release);
    }
    detail::recordPluginAttempt(r);
    if (pluginStatusIsSuccess(r.status)) return ACCEL_OK;
    switch (r.status) {
      case PluginStatus::VersionMismatch:
        return ACCEL_ERROR_VERSION;
      case PluginStatus::Duplicate:
        return ACCEL_ERROR_DUPLICATE;
      case PluginStatus::NotAPlugin:
        return ACCEL_ERROR_INVALID_ARGUMENT;
      default:
        return ACCEL_ERROR_INTERNAL;  // the plugin failed: the report says how
    }
  } catch (const std::bad_alloc&) {
    return ACCEL_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return ACCEL_ERROR_INTERNAL;
  }
}
