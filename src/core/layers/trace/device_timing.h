// DeviceTiming: times the work a hook enqueues on a stream (a copy, a fill,
// a graph replay) with the backend's own timing events, so that the trace
// draws when the device ran it rather than when the host asked.
//
// Around the hook the layer records a start and an end event on the stream
// (events come from a pool per device and go back once read). The work
// waits in a bounded pending list until its end event completed; it is then
// read (elapsedTime), placed on the host timeline and pushed into the trace
// ring as a DeviceWork event with Events timing. Placement: the first timed
// work of each stream is the stream's reference, taken to start when its
// hook began on the host; every later span lies at the reference's host
// time plus the device's elapsed time from it (so a stream that was busy at
// its first timed work is drawn early by at most that backlog).
//
// A backend without the events group, or whose events refuse timing, has
// its work drawn from the hook's host times, marked "host" (trace_json.h).
// Work whose events never complete before the pending list is full, or
// before the trace is written, is drawn from host times as well.
//
// Thread-safety: every member is thread-safe (one mutex, taken only by
// work hooks; hot hooks never reach it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "accel/hooks.h"
#include "layers/trace/trace_event.h"

namespace accel::trace::detail {

class DeviceTiming {
 public:
  // What begin() gives back for end(): the start event, 0 when untimed.
  struct Started {
    EventId start = kNoEvent;
  };

  // Records a start event on `stream`. Never throws (untimed on any error).
  Started begin(AcceleratorHooks& inner, Stream stream) noexcept;

  // Records the end event and queues `work` (a DeviceWork event with host
  // times) for resolution; pushes it right away, host-timed, when `started`
  // is untimed. `push` receives finished events.
  template <typename Push>
  void end(AcceleratorHooks& inner, Stream stream, Started started, TraceEvent work,
           Push&& push) noexcept {
    std::vector<TraceEvent> ready;
    finish(inner, stream, started, work, ready);
    for (const TraceEvent& event : ready) push(event);
  }

  // Gives back the start event of a work whose hook failed. Never throws.
  void abandon(AcceleratorHooks& inner, Stream stream, Started started) noexcept {
    giveBack(inner, stream.device.index(), started.start);
  }

  // Resolves every pending work whose events completed (all of them with
  // `wait`, after synchronising their end events); with `flush_rest`, the
  // others go out host-timed. Never throws.
  template <typename Push>
  void resolve(bool wait, bool flush_rest, Push&& push) noexcept {
    std::vector<TraceEvent> ready;
    resolvePending(wait, flush_rest, ready);
    for (const TraceEvent& event : ready) push(event);
  }

  // Appends the works still waiting for their events, host-timed (they
  // stay pending: a later write reads them). Never throws.
  void appendPendingHostTimed(std::vector<TraceEvent>& out) noexcept;

  // Destroys pooled events (the trace stopped). Never throws.
  void release() noexcept;

  // Most works waiting for their events; past it the oldest goes host-timed.
  static constexpr std::size_t kMaxPending = 4096;

 private:
  struct Pending {
    AcceleratorHooks* inner = nullptr;
    Stream stream;
    EventId start = kNoEvent;
    EventId end = kNoEvent;
    TraceEvent work;
  };
  struct Reference {
    EventId event = kNoEvent;
    std::int64_t host_ticks = 0;  // the host's time of `event` (ring ticks)
  };
  struct StreamKey {
    DeviceType type;
    DeviceIndex device;
    StreamId id;
    friend auto operator<=>(const StreamKey&, const StreamKey&) = default;
  };

  void finish(AcceleratorHooks& inner, Stream stream, Started started, TraceEvent work,
              std::vector<TraceEvent>& ready) noexcept;
  void resolvePending(bool wait, bool flush_rest,
                      std::vector<TraceEvent>& ready) noexcept;
  // Reads one pending work's times; false when its events are not done.
  bool read(Pending& pending, bool wait) noexcept;
  EventId takeEvent(AcceleratorHooks& inner, DeviceIndex device) noexcept;
  void giveBack(AcceleratorHooks& inner, DeviceIndex device, EventId event) noexcept;

  std::mutex mutex_;
  std::deque<Pending> pending_;
  std::map<StreamKey, Reference> references_;
  std::map<std::pair<DeviceType, DeviceIndex>, std::vector<EventId>> pool_;
  std::map<std::pair<DeviceType, DeviceIndex>, AcceleratorHooks*> owners_;
  // Backends whose events cannot time (no events group, or a refusal).
  std::uint64_t untimed_types_ = 0;
};

}  // namespace accel::trace::detail
