// A reader for the Python pickles that hold memory snapshots: what
// `accel.memory._dump_snapshot` (and torch.cuda.memory._dump_snapshot)
// write, a dict of lists, dicts, tuples, str, int, float, bool and None,
// pickled with protocol 2 to 5. Anything else in a pickle (classes, bytes,
// sets, references to globals) is refused by name: a pickle can run code
// when Python loads it, and this reader never does; it only builds data.
//
// The result is the same JSON value the snapshot's JSON form parses to
// (tuples become arrays), so one validation reads both.
//
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace accel::tool {

// The deepest nesting read (containers inside containers); a snapshot needs 6.
inline constexpr int kMaxPickleDepth = 64;

// The value pickled in `data`. Throws InvalidArgument "NAME: pickle offset N:
// what" for a pickle of protocol 0 or 1 (no PROTO opcode), a truncated
// pickle, an unsupported opcode (named), a dict key that
// is not a str, nesting deeper than kMaxPickleDepth, or shared references that
// would expand far beyond the pickle's own size (values, or the bytes of
// strings copied at each reference: at most 64 times the pickle's size).
[[nodiscard]] nlohmann::json readPickle(std::string_view data, std::string_view name);

// Whether `data` begins like a pickle of any protocol: the PROTO opcode
// (protocols 2 to 5), or the opcode that builds a container (MARK, EMPTY_DICT,
// EMPTY_LIST, EMPTY_TUPLE), with which protocols 0 and 1 begin a snapshot.
// readPickle refuses the latter by name, so such a file is never read as text.
[[nodiscard]] bool looksLikePickle(std::string_view data) noexcept;

}  // namespace accel::tool
