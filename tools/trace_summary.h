// The figures `accel trace summary` prints and `accel trace view` shows on
// its page: per hook (calls, total, mean, max), per device stream (spans,
// busy time: the union of its spans), per device the allocator's peaks and
// OOMs, and the events the recorder dropped.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_file.h"

namespace accel::tool {

struct SpanFigures {
  std::string name;  // a hook's name, or "device · stream" for a stream
  std::uint64_t count = 0;
  double total_us = 0;
  double max_us = 0;
  double busy_us = 0;  // streams: time covered by at least one span
  [[nodiscard]] double meanUs() const { return count == 0 ? 0 : total_us / count; }
};

struct MemoryFigures {
  std::string device;
  std::int64_t peak_allocated = 0;
  std::int64_t peak_reserved = 0;
  std::uint64_t ooms = 0;
};

struct TraceSummary {
  std::vector<SpanFigures> hooks;    // "X" events of category "hook", by total time
  std::vector<SpanFigures> streams;  // of categories "device" and "graph", by busy time
  std::vector<SpanFigures> others;   // every other "X" event, by name
  std::vector<MemoryFigures> memory;
  double span_us = 0;  // from the first event to the end of the last
  std::optional<std::uint64_t> dropped;
};

[[nodiscard]] TraceSummary summarizeTrace(const TraceFile& file);

// The summary as text tables (what `accel trace summary` prints).
[[nodiscard]] std::string traceSummaryText(const TraceSummary& summary);

}  // namespace accel::tool
