// openreg's registration and configuration, as programs see them
// (accel/openreg/backend.h, accel/openreg/config.h).
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/openreg/backend.h"
#include "accel/openreg/config.h"
#include "accel/plugin.h"
#include "plugin_calls.h"

// The plugin's entry under openreg's own name (plugin_entry.cpp), so that a
// program linking several plugins reaches openreg's.
extern "C" accel_status accel_openreg_negotiate(const accel_core_offer* offer,
                                                accel_plugin_answer* answer);

namespace accel::openreg {
namespace {

constexpr const char* kOrigin = "libaccel_openreg (accel::openreg::registerBackend)";

}  // namespace

DeviceType deviceType() {
  static const DeviceType type = registerDeviceType(kDeviceTypeName);
  return type;
}

AcceleratorHooks& registerBackend() {
  static std::atomic<AcceleratorHooks*> registered{nullptr};
  if (AcceleratorHooks* hooks = registered.load(std::memory_order_acquire)) [[likely]] {
    return *hooks;
  }
  static std::mutex* mutex = new std::mutex();  // never destroyed: see lifecycle
  std::lock_guard<std::mutex> lock(*mutex);
  if (AcceleratorHooks* hooks = registered.load(std::memory_order_relaxed)) return *hooks;
  const DeviceType type = deviceType();
  // In a fork child of a process that started the backend, the slot holds
  // the core's stand-in (docs/lifecycle.md, "fork()"): it is the backend
  // here, refusing every use with the fork's DeviceError.
  if (isPoisonedByFork(type)) return getHooks(type);
  // Not loaded as a plugin yet (ACCEL_PLUGINS, loadBackend): load the one
  // this program links, through its entry.
  if (!isHooksRegistered(type)) {
    if (accel_core_load_entry(&accel_openreg_negotiate, kOrigin) != ACCEL_OK) {
      std::string why = "the plugin entry was refused";
      for (const PluginRecord& record : pluginReport()) {
        if (record.path == kOrigin) why = describePluginRecord(record);
      }
      throw NotAvailable(detail::concat("accel::openreg::registerBackend(): ", why));
    }
  } else if (std::optional<PluginRecord> loaded = pluginForDeviceType(type);
             loaded && loaded->path != kOrigin) {
    // Loaded from a file: it must be the library this program links, whose
    // runtime this API drives (another copy would have a runtime of its own).
    std::error_code error;  // a path that names no file: nothing to compare
    const std::string linked = pluginPath();
    const bool same = std::filesystem::equivalent(loaded->path, linked, error);
    ACCEL_CHECK(linked.empty() || error || same, NotAvailable,
                "accel::openreg::registerBackend(): openreg was loaded from ",
                loaded->path, ", but this program links ", linked,
                "; two copies of libaccel_openreg.so have two runtimes. Load the one "
                "the program links (ACCEL_PLUGINS=",
                linked, "), or do not load openreg as a plugin");
  }
  AcceleratorHooks& hooks = getHooks(type);
  registered.store(&hooks, std::memory_order_release);
  return hooks;
}

const Config& activeConfig() {
  api::ensureRegistered();
  // The runtime's configuration is fixed once initialised: kept here.
  static const Config* active = [] {
    auto config = std::make_unique<Config>();
    api::check(extension::activeConfig(*config), "activeConfig");
    return config.release();  // never destroyed: see lifecycle
  }();
  return *active;
}

std::string pluginPath() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&accel_openreg_negotiate), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

Config parseConfig(const EnvironmentLookup& lookup) {
  Config config;
  api::check(extension::parseConfig(lookup, config), "parseConfig");
  return config;
}

Config configFromEnvironment() {
  return parseConfig([](const char* name) { return std::getenv(name); });
}

namespace api {

void ensureRegistered() { (void)registerBackend(); }

accel_stream pluginStream(Stream stream, std::string_view what) {
  ACCEL_CHECK(stream.device.type() == deviceType(), InvalidArgument, what, ": ", stream,
              " is not an openreg stream; pass a stream from getHooks(openreg)");
  accel_stream s{};
  s.id = stream.id;
  s.device = stream.device.index();
  return s;
}

DeviceIndex resolveDevice(DeviceIndex index) {
  return index == kCurrentDevice ? getHooks(deviceType()).getCurrentDevice() : index;
}

}  // namespace api
}  // namespace accel::openreg
