// openreg's memory API (accel/openreg/memory.h): allocation from the core's
// caching allocator, copies through the plugin.
#include "accel/openreg/memory.h"

#include <array>
#include <atomic>

#include "accel/context.h"

#include "accel/hooks_table.h"
#include "accel/openreg/backend.h"
#include "plugin_calls.h"

namespace accel::openreg {

DataPtr allocate(std::size_t bytes, DeviceIndex device) {
  // The devices' allocators live as long as the hooks (the process): kept
  // here after the first request, so that an allocation costs what one from
  // getDeviceAllocator(i) does. An index out of range is never kept, and
  // getDeviceAllocator says what is wrong with it.
  static std::array<std::atomic<Allocator*>, kMaxDevicesPerType> kept{};
  if (device >= 0) {
    if (Allocator* allocator = kept[static_cast<std::size_t>(device)].load(
            std::memory_order_acquire)) [[likely]] {
      return allocator->allocate(bytes);
    }
  }
  AcceleratorHooks& hooks = registerBackend();
  const DeviceIndex index = api::resolveDevice(device);
  Allocator& allocator = hooks.getDeviceAllocator(index);
  if (index >= 0 && !isPoisonedByFork(deviceType()))
    kept[static_cast<std::size_t>(index)].store(&allocator, std::memory_order_release);
  return allocator.allocate(bytes);
}

void copy(void* dst, const void* src, std::size_t bytes) {
  api::ensureInitialized();
  api::check(extension::copy(dst, src, bytes), "copy");
}

void copyAsync(void* dst, const void* src, std::size_t bytes, Stream stream) {
  AcceleratorHooks& hooks = api::ensureInitialized();
  api::check(
      extension::copyAsync(dst, src, bytes, api::pluginStream(stream, "copyAsync")),
      "copyAsync");
  if (bytes == 0) return;
  // openreg's own asynchronous copy, outside the hooks (whose copies the
  // core guards): a pinned host block freed while the copy is queued is
  // reused only after it ran, as the core's pinned cache records this
  // stream on it.
  for (const void* host : {static_cast<const void*>(dst), src}) {
    if (!isDevicePointer(host) && hooks.isPinnedPtr(host))
      (void)hooks.recordPinnedStreamUse(host, stream);
  }
}

bool isDevicePointer(const void* ptr) noexcept { return extension::isDevicePointer(ptr); }

}  // namespace accel::openreg
