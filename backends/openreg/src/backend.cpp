#include "accel/openreg/backend.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "accel/context.h"
#include "accel/hooks_table.h"
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
  // In a fork child of a process that started the backend, the slot holds
  // the core's stand-in (docs/lifecycle.md, "fork()"): it is the backend
  // here, refusing every use with the fork's DeviceError. Registering again
  // would be a duplicate registration; not kept, it is the child's only.
  if (isPoisonedByFork(type)) return getHooks(type);
  // Registered by the plugin entry (through the loader's registrar): adopt them.
  if (auto* existing = dynamic_cast<detail::OpenRegHooks*>(&getHooks(type))) {
    registered.store(existing, std::memory_order_release);
    return *existing;
  }
  AcceleratorHooks& hooks =
      registerHooks(std::make_unique<detail::OpenRegHooks>(type),
                    "libaccel_openreg (accel::openreg::registerBackend)");
  registered.store(&hooks, std::memory_order_release);
  return hooks;
}

const Config& activeConfig() { return detail::readyRuntime("activeConfig").config(); }
}  // namespace accel::openreg
