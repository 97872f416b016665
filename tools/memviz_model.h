// What `accel memviz` puts in its page: a snapshot's facts for one device,
// checked field by field and stored compactly. Every distinct string, frame
// and stack is stored once and referred to by index, and the trace is kept as
// columns of numbers, because a recorded trace repeats the same few hundred
// stacks tens of thousands of times (a 60,000-event snapshot is ~100 MB as
// JSON and a few MB as this model).
//
//   {"title", "device",
//    "strings": [str...],
//    "frames": [name, filename, line, ...]         (string ids; 3 per frame)
//    "stacks": [[frame id...]...]                  (stack 0 is the empty one)
//    "states": [block state name...],
//    "segments": [{"address", "total_size", "allocated_size", "active_size",
//                  "requested_size", "stream", "type", "expandable",
//                  "blocks": [address, size, requested, state id, stack id, ...]}],
//    "actions": [trace action name...],
//    "trace": {"action": [id...], "addr": [...], "size": [...],
//              "stream": [...], "stack": [...], "time_us": [...] (when every
//              event has one)}}
//
// In a stack, Python frames (a filename ending in .py) come first, in their
// recorded order, then the native ones: the Python line is what a reader
// recognises.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

#include "snapshot_fields.h"

namespace accel::tool {

// The devices a snapshot describes: those of its segments and the indices of
// its device_traces. Throws InvalidArgument (via `fields`) for a wrong type.
[[nodiscard]] std::set<std::int64_t> snapshotDevices(const nlohmann::json& snapshot,
                                                     const SnapshotFields& fields);

// The model for `device`. Throws InvalidArgument naming the first field that
// is missing or of the wrong type, negative or fractional where a byte count
// is expected, or a block outside its segment.
[[nodiscard]] nlohmann::json buildMemvizModel(const nlohmann::json& snapshot,
                                              std::int64_t device,
                                              const std::string& title,
                                              const SnapshotFields& fields);

}  // namespace accel::tool
