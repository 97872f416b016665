// jsonNestsDeeperThan: the depth check the readers of snapshots and traces
// make before they parse.
//
// A file from outside may nest arrays and objects deeper than any snapshot
// or trace does; such a file is refused before anything is built from it.
// The depth is counted on the text, in one pass, so that the parse itself
// can use nlohmann's plain DOM parser: its parser with a callback (which
// could count the depth as it goes) searches the enclosing array or object
// for a discarded value each time an object ends, which is quadratic in the
// number of objects of an array (a 60 000-event snapshot: 1.8e9 steps).
//
// Thread-safety: a pure function. Throws nothing.
#pragma once

#include <string_view>

namespace accel::tool {

// True when a value (a container, a key, a string, a number or a literal)
// of `text` lies inside more than `max_depth` arrays and objects: the depth
// nlohmann's parser callback gives the value (the top-level value is at
// depth 0). Text that is not JSON is counted as far as it goes; the parse
// reports what is wrong with it.
[[nodiscard]] bool jsonNestsDeeperThan(std::string_view text, int max_depth) noexcept;

}  // namespace accel::tool
