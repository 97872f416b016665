#include "events.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/opencl/opencl.h"
#include "devices.h"
#include "loader.h"
#include "opencl_error.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

struct EventRecord {
  cl_event event = nullptr;  // the last marker recorded; null before any
  DeviceIndex device = 0;
  EventFlags flags;
};

// A retained cl_event, released at scope exit.
class HeldEvent {
 public:
  HeldEvent() = default;
  explicit HeldEvent(cl_event event) noexcept : event_(event) {}
  HeldEvent(HeldEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  HeldEvent& operator=(HeldEvent&&) = delete;
  ~HeldEvent() {
    if (event_ != nullptr) (void)loader().clReleaseEvent(event_);
  }
  [[nodiscard]] cl_event get() const noexcept { return event_; }

 private:
  cl_event event_ = nullptr;
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

  // The record, its cl_event retained for the caller. Throws InvalidArgument.
  std::pair<EventRecord, HeldEvent> hold(EventId id) {
    std::lock_guard lock(mutex_);
    const EventRecord& record = live(id);
    if (record.event != nullptr) (void)loader().clRetainEvent(record.event);
    return {record, HeldEvent(record.event)};
  }

  // Installs `marker` as the event's latest recording; returns the old one
  // (to release outside the lock). Throws InvalidArgument.
  HeldEvent replace(EventId id, cl_event marker) {
    std::lock_guard lock(mutex_);
    EventRecord& record = live(id);
    HeldEvent old(record.event);
    record.event = marker;
    return old;
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
    ACCEL_CHECK(found != records_.end(), InvalidArgument, "event id ", id,
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

EventId createEvent(DeviceIndex device, EventFlags flags) {
  (void)deviceRecord(device);
  ACCEL_CHECK(!flags.interprocess, NotSupported, hookInfo(HookId::createEvent).name,
              "(): the opencl backend has no interprocess events (OpenCL cannot share "
              "events between processes); drop EventFlags::interprocess");
  return EventTable::instance().add({nullptr, device, flags});
}

void destroyEvent(EventId event) noexcept {
  bool found = false;
  const EventRecord record = EventTable::instance().take(event, found);
  if (found && record.event != nullptr) (void)loader().clReleaseEvent(record.event);
}

void recordEvent(EventId event, Stream stream) {
  const DeviceIndex device = EventTable::instance().device(event);
  const cl_command_queue queue = nativeQueue(stream);
  ACCEL_CHECK(device == stream.device.index(), InvalidArgument, "event ", event,
              " belongs to opencl:", static_cast<int>(device), ", the stream to ",
              stream.device.str(), "; create the event on the stream's device");
  cl_event marker = nullptr;
  checkCl(loader().clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker),
          "clEnqueueMarkerWithWaitList", HookId::recordEvent, device);
  // A marker is only guaranteed to start once the queue is flushed; a host
  // waiting for it (query, synchronize, another queue) must see progress.
  (void)loader().clFlush(queue);
  try {
    // The marker recorded before is released as `previous` leaves scope.
    const HeldEvent previous = EventTable::instance().replace(event, marker);
  } catch (...) {
    (void)loader().clReleaseEvent(marker);
    throw;
  }
}

void blockStream(EventId event, Stream stream) {
  const cl_command_queue queue = nativeQueue(stream);
  auto [record, held] = EventTable::instance().hold(event);
  if (held.get() == nullptr) return;  // never recorded: nothing to wait for
  cl_event wait = held.get();
  if (record.device != stream.device.index()) {
    checkCl(loader().clWaitForEvents(1, &wait), "clWaitForEvents across devices",
            HookId::blockStream, record.device);
    return;
  }
  checkCl(loader().clEnqueueBarrierWithWaitList(queue, 1, &wait, nullptr),
          "clEnqueueBarrierWithWaitList", HookId::blockStream, stream.device.index());
}

bool queryEvent(EventId event) {
  auto [record, held] = EventTable::instance().hold(event);
  if (held.get() == nullptr) return true;
  return clEventComplete(held.get(), record.device);
}

void synchronizeEvent(EventId event) {
  auto [record, held] = EventTable::instance().hold(event);
  if (held.get() == nullptr) return;
  cl_event wait = held.get();
  checkCl(loader().clWaitForEvents(1, &wait), "clWaitForEvents", HookId::synchronizeEvent,
          record.device);
}

double elapsedTime(EventId start, EventId end) {
  auto [first, first_event] = EventTable::instance().hold(start);
  auto [second, second_event] = EventTable::instance().hold(end);
  const auto name = hookInfo(HookId::elapsedTime).name;
  ACCEL_CHECK(first.flags.enable_timing && second.flags.enable_timing, InvalidArgument,
              name, "(", start, ", ", end,
              "): both events must be created with EventFlags::enable_timing");
  ACCEL_CHECK(first_event.get() != nullptr && second_event.get() != nullptr,
              InvalidArgument, name, "(", start, ", ", end,
              "): both events must be recorded first");
  ACCEL_CHECK(clEventComplete(first_event.get(), first.device) &&
                  clEventComplete(second_event.get(), second.device),
              InvalidArgument, name, "(", start, ", ", end,
              "): both events must have completed (",
              hookInfo(HookId::synchronizeEvent).name, " first)");
  cl_ulong from = 0, to = 0;
  const std::string what = during("clGetEventProfilingInfo", HookId::elapsedTime) +
                           "; a wrapped queue needs CL_QUEUE_PROFILING_ENABLE";
  checkCl(loader().clGetEventProfilingInfo(first_event.get(), CL_PROFILING_COMMAND_END,
                                           sizeof from, &from, nullptr),
          what, first.device);
  checkCl(loader().clGetEventProfilingInfo(second_event.get(), CL_PROFILING_COMMAND_END,
                                           sizeof to, &to, nullptr),
          what, second.device);
  return (static_cast<double>(to) - static_cast<double>(from)) / 1e6;
}

}  // namespace accel::opencl::detail
