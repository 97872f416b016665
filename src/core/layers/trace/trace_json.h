// The Chrome trace-event JSON of a trace (docs/tracing.md, "The format").
//
// Layout: process 1 is the host, one track per thread, each hook call an
// "X" span named after the hook (args: backend, device, stream, bytes,
// pointers, event or graph id, whether it threw). Each device ("openreg:0")
// is a process of its own: one track per stream with the work the hooks
// enqueued there (copies, fills, synchronisations, graph replays, graph
// captures), timed by the backend's events where it has them ("timing":
// "events") and else by the hook call ("timing": "host"); an "allocator"
// track with the allocator's instants (alloc, free, segment_alloc,
// segment_free, segment_map, segment_unmap, oom with its figures,
// empty_cache); and two counters, "allocated bytes" and "reserved bytes".
// ts and dur are microseconds since the trace began. "otherData" carries
// the producer, the ring's capacity and the number of events dropped.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accel/memory_stats.h"
#include "layers/trace/trace_event.h"

namespace accel::trace::detail {

// The allocator history of one device, entries in time order (steady ns).
struct MemoryTrack {
  DeviceType type = DeviceType::CPU;
  DeviceIndex device = 0;
  // The figures when history recording began (the entries are changes).
  std::int64_t base_allocated = 0;
  std::int64_t base_reserved = 0;
  std::vector<MemoryTraceEntry> entries;
};

struct ThreadName {
  std::uint32_t thread = 0;
  std::string name;
};

struct TraceContents {
  // Times in steady-clock ns (DeviceWork with Events timing: resolved).
  std::vector<TraceEvent> events;
  std::vector<ThreadName> threads;
  // Devices whose allocator history is here; Allocation/Free events of
  // these devices are left out (the history says more).
  std::vector<MemoryTrack> memory;
  std::uint64_t dropped = 0;
  std::uint64_t capacity = 0;
  std::int64_t origin_ns = 0;  // ts 0
  int process_id = 0;          // the OS's, for the host process's name
};

[[nodiscard]] std::string traceToJson(const TraceContents& contents);

}  // namespace accel::trace::detail
