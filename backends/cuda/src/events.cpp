#include "events.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "cuda_error.h"
#include "current_device.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

struct EventRecord {
  cudaEvent_t event = nullptr;
  DeviceIndex device = 0;
};

class EventTable {
 public:
  static EventTable& instance() {
    static EventTable* const table = new EventTable();  // never destroyed
    return *table;
  }

  EventId add(EventRecord record) {
    const EventId id = next_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    events_.emplace(id, record);
    return id;
  }

  EventRecord find(EventId id) {
    std::lock_guard lock(mutex_);
    auto found = events_.find(id);
    ACCEL_CHECK(found != events_.end(), InvalidArgument, "event id ", id,
                " is not a live event of the cuda backend (never created, or destroyed)");
    return found->second;
  }

  bool remove(EventId id, EventRecord& out) noexcept {
    std::lock_guard lock(mutex_);
    auto found = events_.find(id);
    if (found == events_.end()) return false;
    out = found->second;
    events_.erase(found);
    return true;
  }

 private:
  std::atomic<EventId> next_{1};
  std::mutex mutex_;
  std::unordered_map<EventId, EventRecord> events_;
};

EventRecord onStreamDevice(EventId event, Stream stream) {
  EventRecord record = EventTable::instance().find(event);
  ACCEL_CHECK(record.device == stream.device.index(), InvalidArgument, "event ", event,
              " belongs to cuda:", static_cast<int>(record.device), ", the stream to ",
              stream.device.str(), "; create the event on the stream's device");
  return record;
}

}  // namespace

EventId createEvent(DeviceIndex device, EventFlags flags) {
  // CUDA requires cudaEventDisableTiming with cudaEventInterprocess.
  ACCEL_CHECK(!(flags.interprocess && flags.enable_timing), InvalidArgument,
              hookInfo(HookId::createEvent).name,
              "(): cuda events cannot be both interprocess and timed (EventFlags "
              "interprocess and enable_timing); drop one of them");
  DeviceContext context(device);
  unsigned int cudaFlags =
      flags.enable_timing ? cudaEventDefault : cudaEventDisableTiming;
  if (flags.blocking_sync) cudaFlags |= cudaEventBlockingSync;
  if (flags.interprocess) cudaFlags |= cudaEventInterprocess | cudaEventDisableTiming;
  cudaEvent_t event = nullptr;
  checkCuda(cudaEventCreateWithFlags(&event, cudaFlags), "cudaEventCreateWithFlags");
  try {
    return EventTable::instance().add({event, device});
  } catch (...) {
    (void)cudaEventDestroy(event);
    throw;
  }
}

void destroyEvent(EventId event) noexcept {
  EventRecord record;
  if (!EventTable::instance().remove(event, record)) return;
  (void)succeeded(cudaEventDestroy(record.event));  // legal without its context
}

void recordEvent(EventId event, Stream stream) {
  const EventRecord record = onStreamDevice(event, stream);
  DeviceContext context(record.device);
  checkCuda(cudaEventRecord(record.event, nativeStream(stream)), "cudaEventRecord");
}

void blockStream(EventId event, Stream stream) {
  const EventRecord record = EventTable::instance().find(event);
  DeviceContext context(stream.device.index());
  checkCuda(cudaStreamWaitEvent(nativeStream(stream), record.event, 0),
            "cudaStreamWaitEvent");
}

bool queryEvent(EventId event) {
  const EventRecord record = EventTable::instance().find(event);
  const cudaError_t status = cudaEventQuery(record.event);
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  checkCuda(status, "cudaEventQuery");
  return true;
}

void synchronizeEvent(EventId event) {
  const EventRecord record = EventTable::instance().find(event);
  checkCuda(cudaEventSynchronize(record.event), "cudaEventSynchronize");
}

double elapsedTime(EventId start, EventId end) {
  const EventRecord first = EventTable::instance().find(start);
  const EventRecord second = EventTable::instance().find(end);
  float milliseconds = 0;
  checkCuda(cudaEventElapsedTime(&milliseconds, first.event, second.event),
            "cudaEventElapsedTime (both events need enable_timing and must have "
            "completed)");
  return milliseconds;
}

}  // namespace accel::cuda::detail
