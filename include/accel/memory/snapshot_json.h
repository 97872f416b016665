// The JSON form of a MemorySnapshot: the keys and values of PyTorch's
// snapshot dictionary (torch.cuda.memory._snapshot()), so tools written for
// it (PyTorch's memory_viz, `accel memviz`) read ours.
//
//   {"segments": [{"device", "address", "total_size", "allocated_size",
//                  "active_size", "requested_size", "stream", "segment_type":
//                  "small"|"large", "segment_pool_id": [a, b], "is_expandable",
//                  "frames": [], "blocks": [{"address", "size", "requested_size",
//                  "state": "active_allocated"|"active_pending_free"|"inactive",
//                  "frames": [{"filename", "line", "name"}]}]}],
//    "device_traces": [[{"action": "alloc"|"free_requested"|"free_completed"|
//                        "segment_alloc"|"segment_free"|"segment_map"|
//                        "segment_unmap"|"snapshot"|"oom", "addr", "size",
//                        "stream", "time_us", "frames": [...],
//                        "device_free" (oom only)}]]}
// docs/memory.md describes every field.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "accel/export.h"
#include "accel/memory_stats.h"

namespace accel::memory {

// The snapshot as one JSON document (UTF-8, no trailing newline).
[[nodiscard]] ACCEL_API std::string memorySnapshotToJson(const MemorySnapshot& snapshot);
// PyTorch's names, written once here for the writer and the tools.
[[nodiscard]] ACCEL_API std::string_view blockStateName(
    MemoryBlock::State state) noexcept;
[[nodiscard]] ACCEL_API std::string_view traceActionName(
    MemoryTraceEntry::Action action) noexcept;

}  // namespace accel::memory
