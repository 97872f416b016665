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
//    (querying an event recorded in a capture is prohibited), and pages of
//    expandable segments are unmapped once the captures end, after the
//    device's work (cuMemUnmap does not wait for it; synchronising is
//    prohibited during a capture).
//  - Captures count as underway from just before cudaStreamBeginCapture
//    (captureBeginning), so that no other thread's allocator acts in the
//    moment before the capture is registered.
//
// graphs.cpp reports captures beginning and ending; cuda_memory.cpp asks.
// Thread-safety: thread-safe (one mutex; never held while calling the
// caching allocator, which calls back into deferFree under its own lock).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "accel/event.h"
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

// While a capture is underway: keeps the pages [address, address + bytes)
// of device `device` mapped, to be unmapped when the captures end after the
// device's queued work (cuMemUnmap does not wait for it, and synchronising
// is prohibited during a capture), and returns true; otherwise false (wait
// for the device and unmap now). Never throws (false when the list cannot
// grow).
bool deferUnmap(DeviceIndex device, void* address, std::size_t bytes) noexcept;

// Takes back from the deferred unmaps the pages of [address, address + bytes)
// (the allocator maps them again: they are still mapped) and returns the
// parts of the range that are not mapped, in address order. Throws
// std::bad_alloc.
std::vector<std::pair<void*, std::size_t>> takeBackDeferredUnmaps(void* address,
                                                                  std::size_t bytes);

// While a capture is underway and pages of [base, base + bytes) wait for
// their unmap: keeps the address range to be released after them, and
// returns true; otherwise false. Never throws.
bool deferRelease(DeviceIndex device, void* base, std::size_t bytes) noexcept;

// When `stream` is capturing: keeps `event` to be recorded on it when the
// captures end, and returns true; otherwise false. Throws std::bad_alloc.
bool deferRecord(EventId event, Stream stream);

// Whether `event` waits for its deferred record; forgetDeferred drops it
// (the event is being destroyed). Never throw.
bool recordDeferred(EventId event) noexcept;
void forgetDeferred(EventId event) noexcept;

}  // namespace accel::cuda::detail
