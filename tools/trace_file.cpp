#include "trace_file.h"

#include <cctype>
#include <cstdio>

#include "accel/error.h"
#include "input_file.h"
#include "json_depth.h"

namespace accel::tool {
namespace {

constexpr std::string_view kExpectedTrace =
    "a Chrome trace-event JSON file ({\"traceEvents\": [...]} or an array of events), "
    "such as ACCEL_TRACE or accel.profiler writes (docs/tracing.md)";

std::string describe(const nlohmann::json& event, std::size_t index) {
  std::string text = "event " + std::to_string(index);
  if (event.is_object() && event.contains("name") && event["name"].is_string())
    text += " (\"" + event["name"].get<std::string>() + "\")";
  return text;
}

bool isId(const nlohmann::json& value) {
  return value.is_number_integer() || value.is_string();
}

}  // namespace

std::string traceIdText(const nlohmann::json& id) {
  return id.is_string() ? id.get<std::string>() : id.dump();
}

TraceFile checkTraceDocument(nlohmann::json document, std::string_view name,
                             std::string_view command) {
  TraceFile file;
  file.name = std::string(name);
  if (document.is_object()) {
    ACCEL_CHECK(
        document.contains("traceEvents") && document["traceEvents"].is_array(),
        InvalidArgument, command, ": ", name,
        " is not a trace: a JSON object without a \"traceEvents\" array; expected ",
        kExpectedTrace);
    if (document.contains("otherData") && document["otherData"].is_object() &&
        document["otherData"].contains("dropped_events") &&
        document["otherData"]["dropped_events"].is_number_unsigned()) {
      file.dropped = document["otherData"]["dropped_events"].get<std::uint64_t>();
    }
    file.events = std::move(document["traceEvents"]);
  } else if (document.is_array()) {
    file.events = std::move(document);
  } else {
    throw InvalidArgument(
        accel::detail::concat(command, ": ", name,
                              " is not a trace: JSON that is neither an "
                              "object nor an array; expected ",
                              kExpectedTrace));
  }
  for (std::size_t i = 0; i < file.events.size(); ++i) {
    const nlohmann::json& event = file.events[i];
    ACCEL_CHECK(event.is_object(), InvalidArgument, command, ": ", name, ": event ", i,
                " is not an object");
    ACCEL_CHECK(event.contains("ph") && event["ph"].is_string(), InvalidArgument, command,
                ": ", name, ": ", describe(event, i), " has no \"ph\" (phase) string");
    const std::string phase = event["ph"];
    ACCEL_CHECK(event.contains("pid") && isId(event["pid"]), InvalidArgument, command,
                ": ", name, ": ", describe(event, i),
                " has no \"pid\" (number or string)");
    const bool process_scoped = phase == "M" || phase == "C";
    ACCEL_CHECK(process_scoped || (event.contains("tid") && isId(event["tid"])),
                InvalidArgument, command, ": ", name, ": ", describe(event, i),
                " has no \"tid\" (number or string)");
    if (phase != "M") {
      ACCEL_CHECK(event.contains("ts") && event["ts"].is_number(), InvalidArgument,
                  command, ": ", name, ": ", describe(event, i),
                  " has no numeric \"ts\" (microseconds)");
    }
    if (phase == "X") {
      ACCEL_CHECK(event.contains("dur") && event["dur"].is_number() &&
                      event["dur"].get<double>() >= 0,
                  InvalidArgument, command, ": ", name, ": ", describe(event, i),
                  " is a complete event (\"X\") without a \"dur\" of at least 0");
    }
    if (phase == "M" && event.contains("args") && event["args"].is_object() &&
        event["args"].contains("name") && event["args"]["name"].is_string()) {
      const std::string pid = traceIdText(event["pid"]);
      if (event["name"] == "process_name") {
        file.process_names[pid] = event["args"]["name"];
      } else if (event["name"] == "thread_name" && event.contains("tid")) {
        file.thread_names[{pid, traceIdText(event["tid"])}] = event["args"]["name"];
      }
    }
  }
  return file;
}

TraceFile readTraceFile(const std::string& path, std::string_view command,
                        std::size_t max_bytes) {
  InputFileOptions input{command, kExpectedTrace, max_bytes, {}};
  input.check_start = [&](std::string_view first) {
    for (char c : first) {
      if (std::isspace(static_cast<unsigned char>(c))) continue;
      if (c == '{' || c == '[') return;
      char shown[8];
      std::snprintf(shown, sizeof shown, "0x%02x", static_cast<unsigned char>(c));
      throw InvalidArgument(
          accel::detail::concat(command, ": ", path,
                                " is not a trace: it does not begin with '{' or '[' (its "
                                "first character is ",
                                shown, "); expected ", kExpectedTrace));
    }
    throw InvalidArgument(accel::detail::concat(
        command, ": ", path, " is empty: not a trace; expected ", kExpectedTrace));
  };
  const std::string text = readInputFile(path, input);
  // Counted first (json_depth.h): the deep value is never built.
  if (jsonNestsDeeperThan(text, kMaxTraceDepth)) {
    throw InvalidArgument(accel::detail::concat(command, ": ", path,
                                                " nests arrays or objects deeper than ",
                                                kMaxTraceDepth, " levels: not a trace"));
  }
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw InvalidArgument(
        accel::detail::concat(command, ": ", path, " is not valid JSON: ", error.what()));
  }
  return checkTraceDocument(std::move(document), path, command);
}

}  // namespace accel::tool
