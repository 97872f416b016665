// `accel trace summary FILE` and `accel trace view FILE -o page.html`: the
// tables and the timeline page of a Chrome trace-event file, such as the
// tracing layer writes (ACCEL_TRACE, accel.profiler; docs/tracing.md).
// Neither loads a plugin.
#pragma once

#include <string>

namespace accel::tool {

struct TraceCommandOptions {
  std::string trace;  // input path
  std::string output = "trace.html";
  std::string max_input_size;  // parseByteSize syntax; empty: kDefaultMaxInputBytes
};

// Prints the hooks by total time, the streams by busy time, the devices'
// allocator peaks and the dropped count; returns 0. Throws InvalidArgument
// naming the file and what is wrong with it.
int runTraceSummary(const TraceCommandOptions& options);

// Writes the page to options.output; returns 0. Throws InvalidArgument for a
// bad trace (as summary) or an output it cannot write.
int runTraceView(const TraceCommandOptions& options);

}  // namespace accel::tool
