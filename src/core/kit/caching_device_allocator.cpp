// CachingDeviceAllocator: a device's Allocator in libaccel, over the core's
// cache for that device (see the header).
#include "accel/kit/caching_device_allocator.h"

#include "memory/device_cache/device_cache_handle.h"

namespace accel::kit {

void CachingDeviceAllocator::Detour::outOfMemory(const OutOfMemory&,
                                                 const CachingDeviceAllocator&,
                                                 std::size_t) {
  throw;
}

CachingDeviceAllocator::CachingDeviceAllocator(memory::CachingAllocator& cache,
                                               DeviceIndex index,
                                               const ThreadCurrent& current,
                                               Detour* detour, bool diverted)
    : diverted_(diverted),
      device_cache_(cache, index),  // checks the index
      current_(current),
      device_(Device::unchecked(cache.deviceType(), index)),
      detour_(detour),
      cache_(cache) {
  ACCEL_CHECK(detour != nullptr || !diverted, InvalidArgument,
              "CachingDeviceAllocator of ", device_,
              ": a diverted allocator needs a Detour to send requests to");
}

// The fast path: one flag, the thread's stream (an initial-exec TLS load),
// then the device's cache directly (a hidden function of this library: no
// PLT, no index or stream checks, both settled at construction).
DataPtr CachingDeviceAllocator::allocate(std::size_t bytes) {
  if (diverted_.load(std::memory_order_relaxed)) [[unlikely]]
    return detour_->allocate(*this, bytes);
  try {
    return allocateFromCache(bytes);
  } catch (const OutOfMemory& e) {
    rethrowOutOfMemory(e, bytes);
  }
}

DataPtr CachingDeviceAllocator::allocateFromCache(std::size_t bytes) {
  if (bytes == 0) [[unlikely]]
    return DataPtr(nullptr, nullptr, nullptr, device_);
  memory::detail::Block* block =
      device_cache_.allocate(bytes, current_.stream(device_.index()));
  return DataPtr(block->ptr, block, &memory::detail::freeCachedBlock, device_);
}

void CachingDeviceAllocator::rethrowOutOfMemory(const OutOfMemory& error,
                                                std::size_t bytes) const {
  if (detour_ != nullptr) detour_->outOfMemory(error, *this, bytes);
  throw;  // no Detour (an override that returns breaks its contract: rethrow too)
}

void CachingDeviceAllocator::setDiverted(bool diverted) {
  ACCEL_CHECK(detour_ != nullptr || !diverted, InvalidArgument,
              "CachingDeviceAllocator of ", device_,
              ": setDiverted(true) needs a Detour to send requests to");
  diverted_.store(diverted, std::memory_order_relaxed);
}

}  // namespace accel::kit
