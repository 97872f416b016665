// Streams of the opencl backend: in-order command queues.
//
// Stream ids:
//   0                          the device's default queue
//   1 + level * 8 + slot       pool queue `slot` of priority level `level`
//   kExternalStreamBase + n    the n-th external queue wrapped
// Every queue the backend creates is in order with profiling enabled (event
// timing reads profiling info). A pool's queues are created together on the
// first getNewStream of that (device, level) and handed out round robin;
// they are never released (a stream id may be held anywhere, including in
// static destructors).
//
// Priorities: with cl_khr_priority_hints, level 0 is CL_QUEUE_PRIORITY_MED_KHR
// (the default) and level 1 CL_QUEUE_PRIORITY_HIGH_KHR (accelhooks: greater
// runs first); without it there is one level.
//
// Thread-safety: thread-safe. Lifetime: the registry is never destroyed.
#pragma once

#include <utility>

#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

inline constexpr int kStreamsPerPool = 8;
inline constexpr int kMaxPriorityLevels = 2;
inline constexpr StreamId kExternalStreamBase = StreamId{1} << 32;

// {0, greatest level} of device `index`.
std::pair<int, int> streamPriorityRange(DeviceIndex index);

// A pool stream of `device` at `priority` (already checked against the range).
Stream newStream(DeviceIndex device, int priority);

// The queue behind `stream`, created on first use for the default stream.
// Throws InvalidArgument for an id that no pool or wrapped queue has.
cl_command_queue nativeQueue(Stream stream);

// See accel::opencl::wrapExternalQueue (accel/opencl/opencl.h).
Stream wrapExternalQueue(cl_command_queue queue, DeviceIndex device);

// clFinish on every queue of `device` that exists.
void synchronizeDevice(DeviceIndex device);

}  // namespace accel::opencl::detail
