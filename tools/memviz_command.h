// `accel memviz SNAPSHOT -o memory.html`: draws a memory snapshot (the JSON of
// accel/memory/snapshot_json.h, or the pickle accel.memory._dump_snapshot
// writes; both are PyTorch's snapshot dictionary) as one self-contained HTML
// page: no network, works from file://. It shows the allocation timeline with
// axes, a legend, zoom (drag a range) and small allocations folded into one
// band; the segment map at the peak; and a summary of the figures at the peak
// and at snapshot time. docs/memory.md explains how to read it.
#pragma once

#include <cstddef>
#include <string>

namespace accel::tool {

struct MemvizOptions {
  std::string snapshot;  // input path
  std::string output = "memory.html";
  int device = 0;
  std::string max_input_size;  // parseByteSize syntax; empty: kDefaultMaxInputBytes
};

// Writes the page; returns 0. Throws InvalidArgument for an unreadable,
// oversized or malformed snapshot (naming the file and the field at fault)
// and for a --device the snapshot does not describe.
int runMemviz(const MemvizOptions& options);

}  // namespace accel::tool
