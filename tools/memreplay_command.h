// `accel memreplay TRACE`: replays an allocation trace (the text format of
// memreplay_trace.h, or a memory snapshot's JSON, whose device trace is used)
// (or pickle) through the core caching allocator and prints device allocations, reserved
// and allocated peaks, fragmentation and time per operation next to
// malloc/free on the same events. docs/memory.md describes the format.
#pragma once

#include <string>

namespace accel::tool {

struct MemreplayOptions {
  std::string trace;     // path
  std::string settings;  // ACCEL_ALLOC_CONF syntax; empty: defaults
  std::string capacity = "80GiB";
  int device = 0;  // which device trace of a snapshot
  bool json = false;
  std::string max_input_size;  // parseByteSize syntax; empty: kDefaultMaxInputBytes
};

// Prints the report on stdout; returns 0, or throws accel::Error (bad file,
// bad trace line, bad setting) for main to print.
int runMemreplay(const MemreplayOptions& options);

}  // namespace accel::tool
