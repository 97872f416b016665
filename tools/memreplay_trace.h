// Allocation traces and their replay through the core caching allocator:
// the engine of `accel memreplay` and of the memory benchmarks.
//
// A trace is text, one event per line (docs/memory.md):
//   alloc ADDRESS SIZE [STREAM]
//   free ADDRESS [STREAM]
// ADDRESS is any token naming an allocation (hex addresses as recorded,
// or plain ids); SIZE is in bytes; STREAM is a stream id (default 0). Blank
// lines and lines starting with '#' are ignored. Parsing turns addresses
// into dense slots so that the replay does no lookups.
//
// replayThrough runs them through any Allocator (a backend's device
// allocator), so that a backend's own cost per allocation shows.
//
// replayTrace runs the events through a CachingAllocator over a simulated
// device (invented addresses, a capacity, page mapping for expandable
// segments) and reports what a backend would see: device allocations,
// reserved and allocated peaks, fragmentation and time per operation.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "accel/allocator.h"
#include "accel/memory/allocator_settings.h"
#include "accel/stream.h"

namespace accel::tool {

struct TraceEvent {
  enum class Kind : std::uint8_t { Alloc, Free } kind = Kind::Alloc;
  std::uint32_t slot = 0;  // dense id of the allocation
  std::size_t size = 0;    // Alloc only
  StreamId stream = 0;
};

struct Trace {
  std::vector<TraceEvent> events;
  std::uint32_t slots = 0;
};

// Parses the text format. Throws InvalidArgument "NAME:LINE: what is wrong"
// for a malformed line, an address allocated twice, or a free of an address
// that is not allocated. With lenient_frees, frees of unknown addresses are
// skipped instead (a snapshot's ring may begin after their allocation).
[[nodiscard]] Trace parseTrace(std::istream& in, std::string_view name,
                               bool lenient_frees = false);

struct ReplayOptions {
  memory::AllocatorSettings settings;
  std::size_t capacity = std::size_t{80} << 30;  // simulated device memory
  std::size_t page_size = std::size_t{2} << 20;  // for expandable segments
};

struct ReplayResult {
  std::size_t events = 0;
  std::size_t allocs = 0;
  std::size_t frees = 0;
  std::int64_t device_allocs = 0;  // segment allocations and page maps
  std::int64_t device_frees = 0;
  std::int64_t peak_reserved = 0;
  std::int64_t peak_allocated = 0;
  std::int64_t peak_requested = 0;
  std::int64_t peak_inactive_split = 0;  // free bytes inside split segments
  std::int64_t ooms = 0;
  double ns_per_op = 0;
  [[nodiscard]] double reservedOverAllocated() const {
    return peak_allocated == 0
               ? 0.0
               : static_cast<double>(peak_reserved) / static_cast<double>(peak_allocated);
  }
};

// Replays the trace once; allocations still live at the end are freed.
// An OutOfMemory in the simulated device is counted, and the allocation
// skipped (its free then does nothing).
[[nodiscard]] ReplayResult replayTrace(const Trace& trace, const ReplayOptions& options);
// The same events through malloc/free: ns per operation, the baseline.
[[nodiscard]] double replayWithMalloc(const Trace& trace);
// The events once through a backend's device allocator (getDeviceAllocator),
// ignoring streams (an Allocator allocates on the thread's current stream);
// allocations still live at the end are freed, outside the time. Returns ns
// per operation. Throws what the allocator throws (OutOfMemory), after
// freeing what it allocated.
[[nodiscard]] double replayThrough(const Trace& trace, Allocator& allocator);

}  // namespace accel::tool
