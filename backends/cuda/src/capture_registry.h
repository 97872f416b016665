// The captures underway in this process, as the cuda backend's allocator
// must know them (CUDA forbids some of what an allocator does while a
// capture is open; docs/cuda.md, "Captures and the allocator").
//
//  - Routing by capture: allocations on any stream that belongs to a capture
//    (the capturing stream, and streams forked into the capture by waiting on
//    an event recorded in it) come from the capture's private pool, not only
//    those on the stream the capture began on.
//  - While any capture is underway, segments the allocator frees are freed
//    after the last capture ends (cudaFree would be a prohibited call and
//    would invalidate Global captures of other threads), events the
//    allocator would record on a capturing stream are recorded once the
//    captures end (a record there is a graph node, not a real event), and
//    the allocator's event queries answer "not yet" without asking CUDA
//    (querying an event recorded in a capture is prohibited).
//
// graphs.cpp reports captures beginning and ending; cuda_memory.cpp asks.
// Thread-safety: thread-safe (one mutex; never held while calling the
// caching allocator, which calls back into deferFree under its own lock).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "accel/event.h"
#include "accel/graph.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/stream.h"

namespace accel::cuda::detail {

// A capture with CUDA's id `capture_id` began on `origin` (device `device`),
// allocating into `pool`. Throws std::bad_alloc.
void captureBegan(unsigned long long capture_id, DeviceIndex device, MempoolId pool,
                  Stream origin);

// The capture ended (or failed to begin). Returns the streams other than
// the origin that were routed to its pool, for endAllocateToPool; when it was
// the last capture underway, records the deferred events and frees the
// deferred segments first. Never throws.
std::vector<Stream> captureEnded(unsigned long long capture_id) noexcept;

// Whether any capture is underway. Never throws.
bool capturesUnderway() noexcept;

// From now on `allocator` (a device allocator of this backend) is diverted
// exactly while a capture is underway, so that its Detour can route a request
// on a stream forked into a capture to the capture's pool; outside captures
// it goes straight to the cache. Throws std::bad_alloc.
void divertWhileCapturing(kit::CachingDeviceAllocator& allocator);

// Before allocating on `stream` of `device`: when the stream belongs to a
// capture of this registry, makes the caching allocator allocate on it to
// the capture's pool. Throws what beginAllocateToPool throws.
void routeToCapturePool(DeviceIndex device, Stream stream);

// While a capture is underway: keeps `ptr` (a cudaMalloc segment of device
// `device`) to be freed when the captures end, and returns true; otherwise
// false (free it now). Never throws (false when the list cannot grow).
bool deferFree(DeviceIndex device, void* ptr) noexcept;

// When `stream` is capturing: keeps `event` to be recorded on it when the
// captures end, and returns true; otherwise false. Throws std::bad_alloc.
bool deferRecord(EventId event, Stream stream);

// Whether `event` waits for its deferred record; forgetDeferred drops it
// (the event is being destroyed). Never throw.
bool recordDeferred(EventId event) noexcept;
void forgetDeferred(EventId event) noexcept;

}  // namespace accel::cuda::detail
