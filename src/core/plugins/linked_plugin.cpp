// LinkedPlugin: the register-once of a backend's C++ API over the
// plugin the program links (accel/linked_plugin.h).
#include "accel/linked_plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>

#include "accel/context.h"
#include "accel/device_type.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/plugin.h"

namespace accel {

std::string linkedPluginPath(accel_plugin_negotiate_fn entry) {
  Dl_info info{};
  if (entry == nullptr || ::dladdr(reinterpret_cast<void*>(entry), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

AcceleratorHooks& LinkedPlugin::registerOnce() {
  ACCEL_CHECK(!device_type_.empty() && entry_ != nullptr, InvalidArgument,
              "accel::LinkedPlugin: ", caller_,
              " names an empty device type or a null entry");
  const DeviceType type = registerDeviceType(device_type_);
  // In a fork child of a process that started the backend, the slot holds
  // the core's stand-in (docs/lifecycle.md, "fork()"): it is the backend
  // here, refusing every use with the fork's DeviceError.
  if (isPoisonedByFork(type)) return getHooks(type);
  const std::string origin =
      detail::concat("libaccel_", device_type_, " (", caller_, ")");
  static std::mutex* const mutex = new std::mutex();  // never destroyed: see lifecycle
  std::lock_guard<std::mutex> lock(*mutex);
  if (AcceleratorHooks* registered = registered_.load(std::memory_order_relaxed)) {
    return *registered;
  }
  if (!isHooksRegistered(type)) {
    // Not loaded as a plugin yet (ACCEL_PLUGINS, loadBackend): load the one
    // this program links, through its entry.
    if (accel_core_load_entry(entry_, origin.c_str()) != ACCEL_OK) {
      std::string why = "the plugin entry was refused";
      for (const PluginRecord& record : pluginReport()) {
        if (record.path == origin) why = describePluginRecord(record);
      }
      throw NotAvailable(detail::concat(caller_, "(): ", why));
    }
  } else if (std::optional<PluginRecord> loaded = pluginForDeviceType(type);
             loaded && loaded->path != origin) {
    // Loaded from a file: it must be the library this program links, whose
    // runtime the API drives.
    std::error_code error;  // a path that names no file: nothing to compare
    const std::string linked = linkedPluginPath(entry_);
    const bool same = std::filesystem::equivalent(loaded->path, linked, error);
    ACCEL_CHECK(linked.empty() || error || same, NotAvailable, caller_,
                "(): ", device_type_, " was loaded from ", loaded->path,
                ", but this program links ", linked, "; two copies of libaccel_",
                device_type_, ".so have two runtimes. Load the one the program links (",
                "ACCEL_PLUGINS=", linked, "), or do not load ", device_type_,
                " as a plugin");
  }
  AcceleratorHooks& hooks = getHooks(type);
  registered_.store(&hooks, std::memory_order_release);
  return hooks;
}

}  // namespace accel
