#include "events.h"

#include <cuda_runtime_api.h>

#include <optional>

#include "accel/adapter/failure.h"
#include "accel/hook_catalogue.h"
#include "cuda_error.h"
#include "current_device.h"
#include "record_table.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

struct EventRecord {
  cudaEvent_t event = nullptr;
  DeviceIndex device = 0;
};

RecordTable<EventId, EventRecord>& eventTable() {
  static auto* const table =
      new RecordTable<EventId, EventRecord>("event");  // never destroyed
  return *table;
}

// A copy of the record of `event`. Throws InvalidArgument for a dead id.
EventRecord findEvent(EventId event) {
  return eventTable().with(event, [](const EventRecord& record) { return record; });
}

EventRecord onStreamDevice(EventId event, adapter::Stream stream) {
  EventRecord record = findEvent(event);
  ACCEL_ADAPTER_CHECK(record.device == stream.device, adapter::InvalidArgument, "event ",
                      event, " belongs to cuda:", static_cast<int>(record.device),
                      ", the stream to cuda:", static_cast<int>(stream.device),
                      "; create the event on the stream's device");
  return record;
}

}  // namespace

EventId createEvent(DeviceIndex device, std::uint32_t flags) {
  const bool timed = (flags & ACCEL_EVENT_ENABLE_TIMING) != 0;
  const bool interprocess = (flags & ACCEL_EVENT_INTERPROCESS) != 0;
  // CUDA requires cudaEventDisableTiming with cudaEventInterprocess.
  ACCEL_ADAPTER_CHECK(!(interprocess && timed), adapter::InvalidArgument,
                      hookInfo(HookId::createEvent).name,
                      "(): cuda events cannot be both interprocess and timed (EventFlags "
                      "interprocess and enable_timing); drop one of them");
  DeviceContext context(device);
  unsigned int cudaFlags = timed ? cudaEventDefault : cudaEventDisableTiming;
  if ((flags & ACCEL_EVENT_BLOCKING_SYNC) != 0) cudaFlags |= cudaEventBlockingSync;
  if (interprocess) cudaFlags |= cudaEventInterprocess | cudaEventDisableTiming;
  cudaEvent_t event = nullptr;
  checkCuda(cudaEventCreateWithFlags(&event, cudaFlags), "cudaEventCreateWithFlags");
  try {
    return eventTable().add({event, device});
  } catch (...) {
    (void)cudaEventDestroy(event);
    throw;
  }
}

void destroyEvent(EventId event) noexcept {
  const std::optional<EventRecord> record = eventTable().take(event);
  if (!record) return;
  // Legal from any context; but a runtime call on a thread with no current
  // context would create device 0's, so make the event's device current.
  try {
    DeviceContext context(record->device);
    (void)succeeded(cudaEventDestroy(record->event));
  } catch (...) {
    (void)succeeded(cudaEventDestroy(record->event));
  }
}

void recordEvent(EventId event, adapter::Stream stream) {
  const EventRecord record = onStreamDevice(event, stream);
  DeviceContext context(record.device);
  checkCuda(cudaEventRecord(record.event, nativeStream(stream)), "cudaEventRecord");
}

void blockStream(EventId event, adapter::Stream stream) {
  const EventRecord record = findEvent(event);
  DeviceContext context(stream.device);
  checkCuda(cudaStreamWaitEvent(nativeStream(stream), record.event, 0),
            "cudaStreamWaitEvent");
}

// Queries, synchronisation and timing run with the event's device current:
// on a thread without a current context the runtime would otherwise create
// device 0's primary context.
bool queryEvent(EventId event) {
  const EventRecord record = findEvent(event);
  DeviceContext context(record.device);
  const cudaError_t status = cudaEventQuery(record.event);
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  checkCuda(status, "cudaEventQuery");
  return true;
}

void synchronizeEvent(EventId event) {
  const EventRecord record = findEvent(event);
  DeviceContext context(record.device);
  checkCuda(cudaEventSynchronize(record.event), "cudaEventSynchronize");
}

double elapsedTime(EventId start, EventId end) {
  const EventRecord first = findEvent(start);
  const EventRecord second = findEvent(end);
  DeviceContext context(first.device);
  float milliseconds = 0;
  checkCuda(cudaEventElapsedTime(&milliseconds, first.event, second.event),
            "cudaEventElapsedTime (both events need enable_timing and must have "
            "completed)");
  return milliseconds;
}

}  // namespace accel::cuda::detail
