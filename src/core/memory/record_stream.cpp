#include "accel/memory/record_stream.h"

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory {

CachingAllocator* CachingAllocator::owning(const DataPtr& data) noexcept {
  if (data.deleter() != blockDeleter() || data.context() == nullptr) return nullptr;
  return &static_cast<detail::Block*>(data.context())->owner->allocator();
}

bool recordStreamUse(const DataPtr& data, Stream stream) {
  // The block knows its allocator: asking it keeps the checks in one place.
  CachingAllocator* allocator = CachingAllocator::owning(data);
  if (allocator == nullptr) return false;
  allocator->recordStream(data, stream);
  return true;
}

}  // namespace accel::memory
