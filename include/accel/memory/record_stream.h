// recordStreamUse: torch's Tensor.record_stream for memory of any backend
// that hands out the core's caching allocator's blocks, without the caller
// holding that allocator (a binding has only the DataPtr).
//
// Thread-safety: thread-safe (takes the block's device lock).
#pragma once

#include "accel/allocator.h"
#include "accel/export.h"
#include "accel/stream.h"

namespace accel::memory {

// When `data` is a block of a CachingAllocator (any backend's), notes that
// `stream` uses it too, as CachingAllocator::recordStream does: once freed,
// the block is reused only after the work `stream` has at the free
// completed. Returns false, changing nothing, for memory no CachingAllocator
// handed out (the caller says what to do then). Throws InvalidArgument when
// `stream` is not a stream of the block's device.
ACCEL_API bool recordStreamUse(const DataPtr& data, Stream stream);

}  // namespace accel::memory
