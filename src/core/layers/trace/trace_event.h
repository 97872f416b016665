// TraceEvent: one record of the trace ring, a plain value.
//
// Times are TraceClock readings (memory/trace_clock.h: counter ticks where the
// CPU has an invariant counter, else steady-clock ns); the writer converts
// them to steady-clock nanoseconds, the timeline the memory history's
// entries already lie on.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>

#include "accel/device_type.h"
#include "accel/hook_catalogue.h"
#include "accel/stream.h"

namespace accel::trace::detail {

enum class TraceEventKind : std::uint8_t {
  Hook,        // a hook call: [begin, end] on the calling thread
  DeviceWork,  // work a hook enqueued, on its stream's track (see timing)
  Allocation,  // an allocation through a hooks allocator (bytes, ptr; pinned flag)
  Free,        // its free
};

// How a DeviceWork event was timed.
enum class WorkTiming : std::uint8_t {
  HostSide,  // the hook call's own times: the backend has no timing events
  Events,    // the backend's timing events: begin_ns / end_ns are event ids
};

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
  std::int64_t begin = 0;  // clock ticks (Events timing: the start event's id)
  std::int64_t end = 0;    // clock ticks (Events timing: the end event's id)
};

}  // namespace accel::trace::detail
