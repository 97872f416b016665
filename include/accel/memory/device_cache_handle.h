// DeviceCacheHandle: a narrow handle on one device of a CachingAllocator —
// that device's allocate path, without the allocator's per-call checks
// (settled once, when the handle is made), and nothing else.
//
// It is internal to libaccel: kit::CachingDeviceAllocator holds one instead
// of reaching into the allocator, and it is declared in a public header only
// because that public class holds it by value. Its members are defined in
// the core (src/core/memory/device_cache/device_cache_handle.h); a backend
// neither makes nor calls one.
//
// Thread-safety: allocate is as thread-safe as CachingAllocator::allocate.
// Lifetime: must not outlive its CachingAllocator.
#pragma once

#include <cstddef>

#include "accel/device.h"
#include "accel/stream.h"

namespace accel::memory {
class CachingAllocator;
}

namespace accel::memory::detail {

class DeviceCache;
struct Block;

class DeviceCacheHandle {
 public:
  // Device `index` of `allocator`. Throws InvalidArgument for a bad index.
  DeviceCacheHandle(CachingAllocator& allocator, DeviceIndex index);

  // At least `bytes` (> 0) on `stream` of the device, as
  // CachingAllocator::allocate would hand them out (wrap the block with its
  // deleter, CachingAllocator::blockDeleter()). Throws OutOfMemory, and
  // what the device's source throws.
  [[nodiscard]] inline Block* allocate(std::size_t bytes, StreamId stream) const;

 private:
  DeviceCache* cache_;
};

}  // namespace accel::memory::detail
