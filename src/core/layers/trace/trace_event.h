// TraceEvent: one record of the trace ring, a plain value.
//
// Times are the hook layers' clock's ticks while in the ring (layerNowTicks,
// layers/layer_clock.h: the time-stamp counter where the platform has one),
// converted to steady-clock nanoseconds when the trace is collected
// (TraceRecorder::collect), the clock the memory history's entries are
// converted to too (memory/trace_clock.h), so hooks, device work and the
// allocator lie on one timeline.
//
// Thread-safety: a value type.
#pragma once

#include <chrono>
#include <cstdint>

#include "accel/device_type.h"
#include "accel/hook_catalogue.h"
#include "accel/stream.h"
#include "layers/layer_clock.h"

namespace accel::trace::detail {

enum class TraceEventKind : std::uint8_t {
  Hook,        // a hook call: [begin, end] on the calling thread
  DeviceWork,  // work a hook enqueued, on its stream's track (see timing)
  Allocation,  // an allocation through a hooks allocator (bytes, ptr; pinned flag)
  Free,        // its free
  // A C plugin's table function (layers/table_layer.h), nested in its hook:
  // ptr and bytes are the function's name ("streams.query", static storage),
  // object the status or answer it returned.
  PluginCall,
};

// How a DeviceWork event was timed.
enum class WorkTiming : std::uint8_t {
  HostSide,  // the hook call's own times: the backend has no timing events
  Events,    // the backend's timing events measured it (device_timing.h)
};

// Now in steady-clock ns, the collected trace's unit (its origin, the
// allocator's entries).
inline std::int64_t traceNowNs() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct TraceEvent {
  TraceEventKind kind = TraceEventKind::Hook;
  HookId hook = HookId::isBuilt;
  bool failed = false;  // Hook: the call threw. Allocation/Free: pinned memory.
  WorkTiming timing = WorkTiming::HostSide;
  DeviceType type = DeviceType::CPU;
  std::int8_t device = -1;
  std::uint32_t thread = 0;  // the OS thread id of the caller
  StreamId stream = -1;
  std::uint64_t object = 0;  // event / graph id
  std::uint64_t bytes = 0;
  std::uint64_t ptr = 0;
  std::uint64_t ptr2 = 0;
  std::int64_t begin = 0;  // ticks in the ring, steady-clock ns once collected
  std::int64_t end = 0;
};

}  // namespace accel::trace::detail
