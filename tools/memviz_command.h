// `accel memviz SNAPSHOT.json -o memory.html`: draws a memory snapshot (the
// JSON of accel/memory/snapshot_json.h, which is PyTorch's snapshot
// dictionary) as one self-contained HTML page: no network, works from
// file://. It shows the allocation timeline stacked by allocation (hover:
// size, stream, stack), the segment map at the peak with free space, and a
// summary table. docs/memory.md explains how to read it.
#pragma once

#include <string>

namespace accel::tool {

struct MemvizOptions {
  std::string snapshot;  // input path
  std::string output = "memory.html";
  int device = 0;
};

// Writes the page; returns 0. Throws accel::Error for an unreadable or
// malformed snapshot, naming the file and what is missing.
int runMemviz(const MemvizOptions& options);
// The page for a parsed snapshot text (exposed for tests).
[[nodiscard]] std::string renderMemvizPage(const std::string& snapshot_json, int device,
                                           const std::string& title);

}  // namespace accel::tool
