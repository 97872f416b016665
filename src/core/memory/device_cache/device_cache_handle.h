// DeviceCacheHandle's allocate (accel/memory/device_cache_handle.h): inline,
// so that the kit's allocation lands in DeviceCache::allocate with no call
// of its own.
#pragma once

#include "accel/memory/device_cache_handle.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

inline Block* DeviceCacheHandle::allocate(std::size_t bytes, StreamId stream) const {
  return cache_->allocate(bytes, stream);
}

}  // namespace accel::memory::detail
