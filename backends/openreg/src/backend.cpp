#include "accel/openreg/backend.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "openreg_hooks.h"
#include "runtime.h"

namespace accel::openreg {

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
  const std::string plugin = loadingPluginPath();
  AcceleratorHooks& hooks = registerHooks(
      std::make_unique<detail::OpenRegHooks>(type),
      plugin.empty() ? std::string("libaccel_openreg (accel::openreg::registerBackend)")
                     : "plugin " + plugin);
  registered.store(&hooks, std::memory_order_release);
  return hooks;
}

const Config& activeConfig() { return detail::readyRuntime("activeConfig").config(); }
}  // namespace accel::openreg
