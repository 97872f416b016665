// The captures underway in this process, as the cuda backend's memory must
// know them (docs/cuda.md, "Captures and the allocator"):
//
//  - Routing by capture: allocations on any stream that belongs to a capture
//    (the capturing stream, and streams forked into the capture by waiting on
//    an event recorded in it, through the hooks or through CUDA directly)
//    come from the capture's private pool, not only those on the stream the
//    capture began on. The core keeps the pools; a forked stream joins the
//    capture's (adapter::Core::joinCapture) on its first allocation: while a
//    capture is underway the backend diverts the core's device allocations
//    (Core::divertAllocations), and the device memory's checkAllocation asks
//    routeToCapturePool.
//  - Captures count as underway from just before cudaStreamBeginCapture
//    (captureBeginning), so that no other thread's allocator acts in the
//    moment before the capture is registered; what the memory defers while
//    they are underway is capture_deferrals.h's, which this registry tells
//    when captures begin and end.
//
// graphs.cpp reports captures beginning and ending; device_memory.cpp asks.
// Thread-safety: thread-safe (one mutex; never held while calling the core).
#pragma once

#include <cstdint>

#include "accel/adapter/core.h"

namespace accel::cuda::detail {

// A capture is about to begin (before cudaStreamBeginCapture) under `core`,
// the core the backend is registered with: from now on captures count as
// underway, so that another thread's allocator, freeing or event query in
// the moment between the begin and captureBegan already takes the capture
// into account (it would otherwise invalidate the capture), and the core's
// device allocations of `device_count` devices are diverted. Follow with
// captureBegan, or captureAbandoned when the capture did not begin. Throws
// what the core's divert_allocations throws (nothing counts as underway
// then).
void captureBeginning(const adapter::Core& core, int device_count);

// The capture announced by captureBeginning began, with CUDA's id
// `capture_id`, on `origin`. Throws std::bad_alloc (the announcement stays:
// call captureAbandoned).
void captureBegan(unsigned long long capture_id, adapter::Stream origin);

// A capture announced by captureBeginning did not begin (or captureBegan
// failed); when it was the last one underway, what was deferred runs.
// Never throws.
void captureAbandoned() noexcept;

// The capture ended (or failed to begin after captureBegan); when it was
// the last capture underway, records the deferred events, frees the deferred
// segments, unmaps the deferred pages and ends the diversion. Never throws.
void captureEnded(unsigned long long capture_id) noexcept;

// Before the core allocates on `stream` of `device`: when the stream was
// forked into a capture of this registry, joins it to the capture's private
// pool (once). A capture that ended meanwhile is left alone. Throws what
// the core's join_capture throws for anything else, and what CUDA's capture
// query throws.
void routeToCapturePool(std::int8_t device, adapter::Stream stream);

}  // namespace accel::cuda::detail
