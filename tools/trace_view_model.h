// What the `accel trace view` page draws, built from a checked trace file:
// one track per thread and per device stream with its spans, each device's
// allocated and reserved bytes over time with its OOMs and cache flushes,
// and the summary tables. Times are microseconds from the trace's first
// event; names and details are interned to keep the page small.
//
//   {"title", "end", "dropped": n | null, "names": [...], "details": [...],
//    "tracks": [{"label", "group": "host" | "device", "spans": [[ts, dur, name,
//    detail]]}], "memory": [{"label", "allocated": [[ts, bytes]], "reserved": [[ts,
//    bytes]],
//                "marks": [[ts, "oom" | "empty_cache"]]}],
//    "summary": {"hooks": [[name, calls, total, mean, max]],
//                "streams": [[name, spans, total, busy]]}}
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "trace_file.h"

namespace accel::tool {

[[nodiscard]] nlohmann::json buildTraceViewModel(const TraceFile& file,
                                                 const std::string& title);

}  // namespace accel::tool
