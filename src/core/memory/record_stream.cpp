#include "accel/memory/record_stream.h"

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory {

bool recordStreamUse(const DataPtr& data, Stream stream) {
  if (data.deleter() != CachingAllocator::blockDeleter() || data.context() == nullptr)
    return false;
  // The block knows its allocator: asking it keeps the checks in one place.
  auto* block = static_cast<detail::Block*>(data.context());
  block->owner->allocator().recordStream(data, stream);
  return true;
}

}  // namespace accel::memory
