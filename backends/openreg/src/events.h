// Events: openreg's events hook group.
//
// An event is a versioned marker. recordEvent bumps its recorded version and
// enqueues a marker operation that, when the stream reaches it, marks that
// version completed and stamps the time; queryEvent compares the two, and
// synchronizeEvent waits for the version recorded at the time of the call.
// blockStream enqueues a marker that waits for the version recorded at the
// time of the call (an event never recorded is complete, as in CUDA). Markers
// run even on a lost device, so nothing waits forever; the waiters then report
// the loss.
//
// An event belongs to the device it was created on and is recorded on that
// device's streams only; any device's stream may wait for it. Events cannot
// be recorded or waited for on a capturing stream (openreg graphs capture a
// single stream).
//
// Given the device table (the devices events belong to, the queues they are
// recorded on), nothing else.
//
// Thread-safety: all members are thread-safe. An event destroyed while a
// marker still refers to it lives until the marker has run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "id_table.h"
#include "types.h"

namespace accel::openreg::detail {

class DeviceTable;

class Events {
 public:
  // `devices` must outlive this object (the backend owns both).
  explicit Events(const DeviceTable& devices) noexcept : devices_(devices) {}

  [[nodiscard]] EventId create(DeviceIndex index, EventFlags flags);
  void destroy(EventId event) noexcept;
  void record(EventId event, Stream stream);
  void block(EventId event, Stream stream);
  [[nodiscard]] bool query(EventId event);
  void synchronize(EventId event);
  [[nodiscard]] double elapsedMilliseconds(EventId start, EventId end);

 private:
  struct Event {
    EventId id = kNoEvent;
    DeviceIndex device = 0;
    EventFlags flags;
    std::atomic<std::uint64_t> recorded{0};
    std::atomic<std::uint64_t> completed{0};
    std::mutex mutex;  // guards time and pairs with cv
    std::condition_variable cv;
    std::chrono::steady_clock::time_point time;

    void complete(std::uint64_t version) noexcept;
    // Waits until `version` has completed (spinning first unless blocking_sync).
    void waitFor(std::uint64_t version);
  };

  [[nodiscard]] std::shared_ptr<Event> find(EventId event, HookId hook) const;

  const DeviceTable& devices_;
  IdTable<EventId, Event> events_;
};

}  // namespace accel::openreg::detail
