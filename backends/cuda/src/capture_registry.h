// The captures underway in this process and their private pools, as the
// cuda backend's allocator must know them (docs/cuda.md, "Captures and the
// allocator"):
//
//  - Routing by capture: allocations on any stream that belongs to a capture
//    (the capturing stream, and streams forked into the capture by waiting on
//    an event recorded in it) come from the capture's private pool, not only
//    those on the stream the capture began on.
//  - Captures count as underway from just before cudaStreamBeginCapture
//    (captureBeginning), so that no other thread's allocator acts in the
//    moment before the capture is registered; what the memory defers while
//    they are underway is capture_deferrals.h's, which this registry tells
//    when captures begin and end.
//
// graphs.cpp reports captures beginning and ending; cuda_memory.cpp asks.
// Thread-safety: thread-safe (one mutex; never held while calling the
// caching allocator, which calls back into deferFree under its own lock).
#pragma once

#include <vector>

#include "accel/graph.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/stream.h"

namespace accel::cuda::detail {

// A capture is about to begin (before cudaStreamBeginCapture): from now on
// captures count as underway, so that another thread's allocator, freeing
// or event query in the moment between the begin and captureBegan already
// takes the capture into account (it would otherwise invalidate the
// capture). Follow with captureBegan, or captureAbandoned when the capture
// did not begin. Never throws.
void captureBeginning() noexcept;

// The capture announced by captureBeginning began, with CUDA's id
// `capture_id`, on `origin` (device `device`), allocating into `pool`.
// Throws std::bad_alloc (the announcement stays: call captureAbandoned).
void captureBegan(unsigned long long capture_id, DeviceIndex device, MempoolId pool,
                  Stream origin);

// A capture announced by captureBeginning did not begin (or captureBegan
// failed); when it was the last one underway, what was deferred runs.
// Never throws.
void captureAbandoned() noexcept;

// The capture ended (or failed to begin after captureBegan). Returns the
// streams other than the origin that were routed to its pool, for
// endAllocateToPool; when it was the last capture underway, records the
// deferred events, frees the deferred segments and unmaps the deferred
// pages first. Never throws.
std::vector<Stream> captureEnded(unsigned long long capture_id) noexcept;

// From now on `allocator` (a device allocator of this backend) is diverted
// exactly while a capture is underway, so that its Detour can route a request
// on a stream forked into a capture to the capture's pool; outside captures
// it goes straight to the cache. Throws std::bad_alloc.
void divertWhileCapturing(kit::CachingDeviceAllocator& allocator);

// Before allocating on `stream` of `device`: when the stream belongs to a
// capture of this registry, makes the caching allocator allocate on it to
// the capture's pool. Throws what beginAllocateToPool throws.
void routeToCapturePool(DeviceIndex device, Stream stream);

}  // namespace accel::cuda::detail
