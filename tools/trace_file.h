// A Chrome trace-event file read and checked for the `accel trace` commands:
// the JSON object form ({"traceEvents": [...], ...}) or the bare array form,
// every event an object with a "ph" string; every event but metadata has a
// numeric "ts", every "X" a numeric "dur" of at least 0, every event a
// "pid" and "tid" (numbers or strings). Reading is bounded like memviz's
// (input_file.h) and nesting deeper than kMaxTraceDepth is refused.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace accel::tool {

inline constexpr int kMaxTraceDepth = 32;

struct TraceFile {
  std::string name;                                  // the path, for messages and titles
  nlohmann::json events;                             // the checked traceEvents array
  std::map<std::string, std::string> process_names;  // pid (as text) -> name
  std::map<std::pair<std::string, std::string>, std::string> thread_names;
  std::optional<std::uint64_t> dropped;  // otherData.dropped_events, when given
};

// The pid or tid of an event as text (numbers and strings alike).
[[nodiscard]] std::string traceIdText(const nlohmann::json& id);

// Checks a parsed document. Throws InvalidArgument "COMMAND: NAME ..." naming
// the event (its index and name) and the field at fault.
[[nodiscard]] TraceFile checkTraceDocument(nlohmann::json document, std::string_view name,
                                           std::string_view command);

// Reads `path` (at most `max_bytes`) and checks it. Throws InvalidArgument
// naming the file: unreadable, too large, not JSON, not a trace.
[[nodiscard]] TraceFile readTraceFile(const std::string& path, std::string_view command,
                                      std::size_t max_bytes);

}  // namespace accel::tool
