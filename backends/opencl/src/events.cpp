#include "events.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "devices.h"
#include "loader.h"
#include "opencl_error.h"
#include "queue_tails.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

// The last marker recorded for an event, shared between the table and the
// calls waiting for it: a wait holds its own reference, so a concurrent
// recordEvent or destroyEvent cannot release the cl_event under it. The
// count is ours (one atomic increment and decrement) rather than
// clRetainEvent/clReleaseEvent around every wait: each of those takes the
// driver's lock on the event, which pocl's worker holds while it completes
// the marker, so the host thread could block on it just before the wait
// (bench/opencl: BM_RecordAndWait_*). clReleaseEvent runs once per marker,
// when the last reference goes, as in the raw loop.
using Marker = std::shared_ptr<std::remove_pointer_t<cl_event>>;

Marker adoptMarker(cl_event event) {
  // On bad_alloc the deleter has already released `event`.
  return Marker(event, [](cl_event e) noexcept { (void)loader().clReleaseEvent(e); });
}

struct EventRecord {
  Marker marker;  // the last marker recorded; null before any
  DeviceIndex device = 0;
  bool timing = false;  // created with ACCEL_EVENT_ENABLE_TIMING
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
    records_.emplace(id, record);
    return id;
  }

  // A copy of the record, holding its marker for the caller. Throws
  // InvalidArgument.
  EventRecord hold(EventId id) {
    std::lock_guard lock(mutex_);
    return live(id);
  }

  // Installs `marker` as the event's latest recording; returns the old one
  // (to release outside the lock). Throws InvalidArgument.
  Marker replace(EventId id, Marker marker) {
    std::lock_guard lock(mutex_);
    EventRecord& record = live(id);
    record.marker.swap(marker);
    return marker;
  }

  EventRecord take(EventId id, bool& found) noexcept {
    std::lock_guard lock(mutex_);
    auto it = records_.find(id);
    found = it != records_.end();
    if (!found) return {};
    EventRecord record = it->second;
    records_.erase(it);
    return record;
  }

  DeviceIndex device(EventId id) {
    std::lock_guard lock(mutex_);
    return live(id).device;
  }

 private:
  EventRecord& live(EventId id) {
    auto found = records_.find(id);
    ACCEL_ADAPTER_CHECK(found != records_.end(), InvalidArgument, "event id ", id,
                        " is not a live event of the opencl backend (never created, or "
                        "destroyed)");
    return found->second;
  }

  std::atomic<EventId> next_{1};
  std::mutex mutex_;
  std::unordered_map<EventId, EventRecord> records_;
};

}  // namespace

bool clEventComplete(cl_event event, DeviceIndex device) {
  cl_int status = CL_COMPLETE;
  checkCl(loader().clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                  &status, nullptr),
          "clGetEventInfo", HookId::queryEvent, device);
  if (status < 0) {
    throwCl(status, "a command the event waits for", device);
  }
  return status == CL_COMPLETE;
}

EventId createEvent(DeviceIndex device, std::uint32_t flags) {
  (void)deviceRecord(device);
  ACCEL_ADAPTER_CHECK((flags & ACCEL_EVENT_INTERPROCESS) == 0, NotSupported,
                      name(HookId::createEvent),
                      "(): the opencl backend has no interprocess events (OpenCL cannot "
                      "share events between processes); drop EventFlags::interprocess");
  return EventTable::instance().add(
      {nullptr, device, (flags & ACCEL_EVENT_ENABLE_TIMING) != 0});
}

void destroyEvent(EventId event) noexcept {
  bool found = false;
  // The marker is released (outside the lock) as `record` leaves scope,
  // unless a wait still holds it.
  const EventRecord record = EventTable::instance().take(event, found);
}

void recordEvent(EventId event, Stream stream) {
  const DeviceIndex device = EventTable::instance().device(event);
  const cl_command_queue queue = nativeQueue(stream);
  ACCEL_ADAPTER_CHECK(device == stream.device, InvalidArgument, "event ", event,
                      " belongs to ", DeviceName{device}, ", the stream to ",
                      DeviceName{stream.device},
                      "; create the event on the stream's device");
  cl_event marker = nullptr;
  checkCl(queueTail(queue).enqueue(
              [&](cl_event* done) {
                return loader().clEnqueueMarkerWithWaitList(queue, 0, nullptr, done);
              },
              &marker),
          "clEnqueueMarkerWithWaitList", HookId::recordEvent, device);
  // A marker is only guaranteed to start once the queue is flushed; a host
  // waiting for it (query, synchronize, another queue) must see progress.
  (void)loader().clFlush(queue);
  // The marker recorded before is released as `previous` leaves scope.
  const Marker previous = EventTable::instance().replace(event, adoptMarker(marker));
}

void blockStream(EventId event, Stream stream) {
  const cl_command_queue queue = nativeQueue(stream);
  const EventRecord record = EventTable::instance().hold(event);
  if (!record.marker) return;  // never recorded: nothing to wait for
  cl_event wait = record.marker.get();
  if (record.device != stream.device) {
    checkCl(loader().clWaitForEvents(1, &wait), "clWaitForEvents across devices",
            HookId::blockStream, record.device);
    return;
  }
  // The barrier is the queue's last command: the stream is busy until the
  // event's work is done.
  checkCl(queueTail(queue).enqueue([&](cl_event* done) {
    return loader().clEnqueueBarrierWithWaitList(queue, 1, &wait, done);
  }),
          "clEnqueueBarrierWithWaitList", HookId::blockStream, stream.device);
}

bool queryEvent(EventId event) {
  const EventRecord record = EventTable::instance().hold(event);
  if (!record.marker) return true;
  return clEventComplete(record.marker.get(), record.device);
}

void synchronizeEvent(EventId event) {
  const EventRecord record = EventTable::instance().hold(event);
  if (!record.marker) return;
  cl_event wait = record.marker.get();
  checkCl(loader().clWaitForEvents(1, &wait), "clWaitForEvents", HookId::synchronizeEvent,
          record.device);
}

double elapsedTime(EventId start, EventId end) {
  const EventRecord first = EventTable::instance().hold(start);
  const EventRecord second = EventTable::instance().hold(end);
  cl_event first_event = first.marker.get();
  cl_event second_event = second.marker.get();
  const std::string_view name = detail::name(HookId::elapsedTime);
  ACCEL_ADAPTER_CHECK(first.timing && second.timing, InvalidArgument, name, "(", start,
                      ", ", end,
                      "): both events must be created with EventFlags::enable_timing");
  ACCEL_ADAPTER_CHECK(first_event != nullptr && second_event != nullptr, InvalidArgument,
                      name, "(", start, ", ", end,
                      "): both events must be recorded first");
  ACCEL_ADAPTER_CHECK(clEventComplete(first_event, first.device) &&
                          clEventComplete(second_event, second.device),
                      InvalidArgument, name, "(", start, ", ", end,
                      "): both events must have completed (",
                      detail::name(HookId::synchronizeEvent), " first)");
  cl_ulong from = 0, to = 0;
  const std::string what = during("clGetEventProfilingInfo", HookId::elapsedTime) +
                           "; a wrapped queue needs CL_QUEUE_PROFILING_ENABLE";
  checkCl(loader().clGetEventProfilingInfo(first_event, CL_PROFILING_COMMAND_END,
                                           sizeof from, &from, nullptr),
          what, first.device);
  checkCl(loader().clGetEventProfilingInfo(second_event, CL_PROFILING_COMMAND_END,
                                           sizeof to, &to, nullptr),
          what, second.device);
  return (static_cast<double>(to) - static_cast<double>(from)) / 1e6;
}

}  // namespace accel::opencl::detail
