// Events of the cuda backend: accel::EventId <-> cudaEvent_t.
//
// Ids come from a counter and are never reused; an event remembers its
// device, so recording it on another device's stream is refused with
// InvalidArgument instead of CUDA's error. The flags (ACCEL_EVENT_*) map to
// cudaEventDisableTiming (unless ENABLE_TIMING), cudaEventBlockingSync and
// cudaEventInterprocess.
//
// Thread-safety: thread-safe (one mutex around the table; CUDA calls run
// outside it). Lifetime: the table is never destroyed.
#pragma once

#include "accel/adapter/core.h"
#include "accel/device.h"
#include "accel/event.h"
#include "accel/plugin_abi.h"

namespace accel::cuda::detail {

EventId createEvent(DeviceIndex device, std::uint32_t flags);
void destroyEvent(EventId event) noexcept;
void recordEvent(EventId event, adapter::Stream stream);
void blockStream(EventId event, adapter::Stream stream);
bool queryEvent(EventId event);
void synchronizeEvent(EventId event);
double elapsedTime(EventId start, EventId end);

}  // namespace accel::cuda::detail
