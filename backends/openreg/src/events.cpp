#include "events.h"

#include <string_view>
#include <thread>

#include "device_table.h"

namespace accel::openreg::detail {
namespace {

// How long a non-blocking synchronize spins before it sleeps: short waits are
// common (the event was recorded just before) and a futex wake-up costs more.
constexpr std::chrono::microseconds kSpinTime{50};

void refuseCapturing(StreamQueue& queue, HookId hook) {
  if (std::shared_ptr<Capture> capture = queue.capture()) {
    throw NotSupported(concat(
        hookInfo(hook).name, "(): ", StreamName{queue.stream()}, " is capturing graph ",
        capture->graph,
        "; openreg graphs capture a single stream and cannot contain event records or "
        "waits. Record events before ",
        hookInfo(HookId::graphCaptureBegin).name, " or after ",
        hookInfo(HookId::graphCaptureEnd).name));
  }
}

}  // namespace

void Events::Event::complete(std::uint64_t version) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex);
    time = std::chrono::steady_clock::now();
    if (version > completed.load(std::memory_order_relaxed)) {
      completed.store(version, std::memory_order_release);
    }
  }
  cv.notify_all();
}

void Events::Event::waitFor(std::uint64_t version) {
  if (completed.load(std::memory_order_acquire) >= version) return;
  if (!flags.blocking_sync) {
    const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    while (std::chrono::steady_clock::now() < deadline) {
      if (completed.load(std::memory_order_acquire) >= version) return;
      std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [&] { return completed.load(std::memory_order_acquire) >= version; });
}

EventId Events::create(DeviceIndex index, EventFlags flags) {
  // Its devices are threads of this process: nothing to share.
  ACCEL_ADAPTER_CHECK(
      !flags.interprocess, NotSupported, "'openreg' does not support ",
      hookInfo(HookId::createEvent).name,
      "() with EventFlags interprocess: its events exist in one process only");
  (void)devices_.device(index, hookInfo(HookId::createEvent).name);
  return events_.add([&](EventId id) {
    auto event = std::make_shared<Event>();
    event->id = id;
    event->device = index;
    event->flags = flags;
    return event;
  });
}

void Events::destroy(EventId event) noexcept {
  // Lives on here until every marker that refers to it has run.
  (void)events_.take(event);
}

std::shared_ptr<Events::Event> Events::find(EventId event, HookId hook) const {
  if (std::shared_ptr<Event> found = events_.find(event)) return found;
  throw InvalidArgument(concat(hookInfo(hook).name, "(): openreg has no event ", event,
                               " (never created, or destroyed); create one with ",
                               hookInfo(HookId::createEvent).name));
}

void Events::record(EventId id, Stream stream) {
  const std::string_view hook = hookInfo(HookId::recordEvent).name;
  std::shared_ptr<Event> event = find(id, HookId::recordEvent);
  StreamQueue& queue = devices_.queue(stream, hook);
  ACCEL_ADAPTER_CHECK(
      stream.device == event->device, InvalidArgument, hook, "(): event ", id,
      " belongs to ", DeviceName{event->device}, " and cannot be recorded on ",
      StreamName{stream},
      "; record it on a stream of its own device, or create the event on ",
      DeviceName{stream.device});
  refuseCapturing(queue, HookId::recordEvent);
  devices_.device(stream.device, hook).faults.beginOperation(hook);
  const std::uint64_t version =
      event->recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
  Operation marker;
  marker.name = "event record";
  marker.is_marker = true;
  marker.then = [event, version] { event->complete(version); };
  try {
    queue.enqueue(std::move(marker));
  } catch (...) {
    event->complete(version);  // nobody must wait for a record that never runs
    throw;
  }
}

void Events::block(EventId id, Stream stream) {
  const std::string_view hook = hookInfo(HookId::blockStream).name;
  std::shared_ptr<Event> event = find(id, HookId::blockStream);
  StreamQueue& queue = devices_.queue(stream, hook);
  refuseCapturing(queue, HookId::blockStream);
  const std::uint64_t target = event->recorded.load(std::memory_order_acquire);
  if (target == 0) return;  // never recorded: nothing to wait for, as in CUDA
  devices_.device(stream.device, hook).faults.beginOperation(hook);
  Operation marker;
  marker.name = "event wait";
  marker.is_marker = true;
  marker.body = [event, target] { event->waitFor(target); };
  queue.enqueue(std::move(marker));
}

bool Events::query(EventId id) {
  const std::string_view hook = hookInfo(HookId::queryEvent).name;
  std::shared_ptr<Event> event = find(id, HookId::queryEvent);
  devices_.device(event->device, hook).faults.checkNotLost(hook);
  return event->completed.load(std::memory_order_acquire) >=
         event->recorded.load(std::memory_order_acquire);
}

void Events::synchronize(EventId id) {
  const std::string_view hook = hookInfo(HookId::synchronizeEvent).name;
  std::shared_ptr<Event> event = find(id, HookId::synchronizeEvent);
  DeviceState& device = devices_.device(event->device, hook);
  device.faults.checkNotLost(hook);
  event->waitFor(event->recorded.load(std::memory_order_acquire));
  device.faults.checkNotLost(hook);
}

double Events::elapsedMilliseconds(EventId start_id, EventId end_id) {
  const std::string_view hook = hookInfo(HookId::elapsedTime).name;
  std::shared_ptr<Event> start = find(start_id, HookId::elapsedTime);
  std::shared_ptr<Event> end = find(end_id, HookId::elapsedTime);
  for (const auto& event : {start, end}) {
    ACCEL_ADAPTER_CHECK(event->flags.enable_timing, InvalidArgument, hook, "(): event ",
                        event->id,
                        " was created without enable_timing; create both events with "
                        "EventFlags{.enable_timing = true}");
    const std::uint64_t recorded = event->recorded.load(std::memory_order_acquire);
    ACCEL_ADAPTER_CHECK(recorded > 0, InvalidArgument, hook, "(): event ", event->id,
                        " was never recorded; record both events first");
    ACCEL_ADAPTER_CHECK(event->completed.load(std::memory_order_acquire) >= recorded,
                        InvalidArgument, hook, "(): event ", event->id,
                        " has not completed yet; call ",
                        hookInfo(HookId::synchronizeEvent).name, " on it first");
    devices_.device(event->device, hook).faults.checkNotLost(hook);
  }
  std::chrono::steady_clock::time_point start_time;
  std::chrono::steady_clock::time_point end_time;
  {
    std::lock_guard<std::mutex> lock(start->mutex);
    start_time = start->time;
  }
  {
    std::lock_guard<std::mutex> lock(end->mutex);
    end_time = end->time;
  }
  return std::chrono::duration<double, std::milli>(end_time - start_time).count();
}

}  // namespace accel::openreg::detail
