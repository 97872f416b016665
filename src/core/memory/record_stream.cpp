#include "accel/memory/record_stream.h"

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "layers/layered_allocator.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory {

CachingAllocator* CachingAllocator::owning(const DataPtr& data) noexcept {
  // Behind a hook layer's DataPtr (layers/layered_allocator.h) may be a block.
  const accel::detail::DataPtrView view = accel::detail::innerView(data);
  if (view.deleter != blockDeleter() || view.context == nullptr) return nullptr;
  return &static_cast<detail::Block*>(view.context)->owner->allocator();
}

bool recordStreamUse(const DataPtr& data, Stream stream) {
  // The block knows its allocator: asking it keeps the checks in one place.
  CachingAllocator* allocator = CachingAllocator::owning(data);
  if (allocator == nullptr) return false;
  allocator->recordStream(data, stream);
  return true;
}

}  // namespace accel::memory
