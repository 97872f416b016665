// What the cuda backend's memory postpones while any capture is underway in
// the process (CUDA forbids it during a capture; docs/cuda.md, "Captures and
// the allocator"):
//  - segments the allocator frees are freed after the last capture ends
//    (cudaFree would be a prohibited call and would invalidate Global
//    captures of other threads);
//  - events the allocator would record on a capturing stream are recorded
//    once the captures end (a record there is a graph node, not a real
//    event), and the allocator's event queries answer "not yet" without
//    asking CUDA (querying an event recorded in a capture is prohibited);
//  - pages of expandable segments are unmapped once the captures end, after
//    the device's work (cuMemUnmap does not wait for it; synchronising is
//    prohibited during a capture), and the address ranges holding them are
//    released after them.
//
// These rules are the memory's own: they stay with the backend's memory
// whoever keeps the captures' pools (capture_registry.h routes allocations
// to them and reports captures beginning and ending here).
//
// Thread-safety: thread-safe (one mutex; never held while calling the
// caching allocator, which calls deferFree under its own lock).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "accel/adapter/core.h"
#include "accel/device.h"
#include "accel/event.h"

namespace accel::cuda::detail {

// One more capture counts as underway (from just before
// cudaStreamBeginCapture, so that no other thread's allocator acts in the
// moment before the capture is known). Never throws.
void deferWhileCapturing() noexcept;

// One capture fewer is underway; when it was the last one, records the
// deferred events, frees the deferred segments, unmaps the deferred pages
// and releases the deferred ranges, and returns true. Never throws.
bool captureNoLongerUnderway() noexcept;

// Whether any capture is underway. Never throws.
bool capturesUnderway() noexcept;

// Frees `ptr` (a cudaMalloc segment of device `device`): while a capture is
// underway, when the captures end; otherwise now, and no capture begins
// until cudaFree has returned (deferWhileCapturing waits for it). Never
// throws (freed now when the list cannot grow).
void freeSegment(DeviceIndex device, void* ptr) noexcept;

// Unmaps the pages [address, address + bytes) of device `device` after the
// device's queued work: while a capture is underway, when the captures end
// (they stay mapped until then); otherwise now, and no capture begins until
// the synchronisation and the unmap are done. Never throws (unmapped now
// when the list cannot grow).
void unmapPages(DeviceIndex device, void* address, std::size_t bytes) noexcept;

// Takes back from the deferred unmaps the pages of [address, address + bytes)
// (the allocator maps them again: they are still mapped) and returns the
// parts of the range that are not mapped, in address order. Throws
// std::bad_alloc.
std::vector<std::pair<void*, std::size_t>> takeBackDeferredUnmaps(void* address,
                                                                  std::size_t bytes);

// While pages of [base, base + bytes) wait for their unmap: keeps the
// address range to be released after them, and returns true; otherwise
// false. Never throws.
bool deferRelease(DeviceIndex device, void* base, std::size_t bytes) noexcept;

// When `stream` is capturing: keeps `event` to be recorded on it when the
// captures end, and returns true; otherwise false. Throws std::bad_alloc and
// what isCapturing throws.
bool deferRecord(EventId event, adapter::Stream stream);

// Whether `event` waits for its deferred record; forgetDeferred drops it
// (the event is being destroyed). Never throw.
bool recordDeferred(EventId event) noexcept;
void forgetDeferred(EventId event) noexcept;

}  // namespace accel::cuda::detail
