// Events of the opencl backend: an event id -> the cl_event of a marker.
//
// recordEvent enqueues a marker (clEnqueueMarkerWithWaitList) on the
// stream's queue and keeps its cl_event, releasing the one recorded before;
// an event never recorded counts as complete, as in CUDA. blockStream
// enqueues a barrier waiting for it (clEnqueueBarrierWithWaitList); an event
// of another device (another context, whose events a queue cannot wait for)
// is waited for on the host instead. Timing reads the markers' profiling
// info (CL_PROFILING_COMMAND_END), so it needs both events created with
// enable_timing and recorded on queues with profiling enabled (every queue
// the backend creates has it).
//
// Ids come from a counter and are never reused.
//
// Thread-safety: thread-safe (one mutex around the table; OpenCL calls that
// wait run outside it, holding their own reference to the marker). Lifetime:
// never destroyed.
#pragma once

#include <cstdint>

#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

// flags: ACCEL_EVENT_* bits. Throws NotSupported for an interprocess event.
EventId createEvent(DeviceIndex device, std::uint32_t flags);
void destroyEvent(EventId event) noexcept;
void recordEvent(EventId event, Stream stream);
void blockStream(EventId event, Stream stream);
bool queryEvent(EventId event);
void synchronizeEvent(EventId event);
double elapsedTime(EventId start, EventId end);

// A marker's status, for a cl_event the caller holds: true once complete.
// Throws DeviceError when the command failed.
bool clEventComplete(cl_event event, DeviceIndex device);

}  // namespace accel::opencl::detail
