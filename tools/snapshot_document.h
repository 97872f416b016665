// A memory snapshot file parsed into a JSON value, whichever form it has: the
// JSON of accel/memory/snapshot_json.h, or the pickle that
// accel.memory._dump_snapshot (or PyTorch's) writes. Parsing is bounded:
// nesting deeper than a snapshot's is refused while parsing, before any deep
// value exists (a 100,000-deep array would otherwise overflow the stack of
// whatever walks it recursively).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace accel::tool {

// The deepest nesting of arrays and objects accepted; a snapshot needs 6.
inline constexpr int kMaxSnapshotDepth = 64;

enum class SnapshotForm { Json, Pickle, Other };

// What `first_bytes` of a file look like: '{' after white space, a pickle's
// PROTO opcode, or neither.
[[nodiscard]] SnapshotForm snapshotFormOf(std::string_view first_bytes) noexcept;

// The parsed document. Throws InvalidArgument "COMMAND: NAME ..." when the
// text is neither form, is malformed, or nests too deeply.
[[nodiscard]] nlohmann::json parseSnapshotDocument(std::string_view text,
                                                   std::string_view name,
                                                   std::string_view command);

}  // namespace accel::tool
