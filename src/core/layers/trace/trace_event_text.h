// EventText: one trace event's JSON object, written field by field straight
// into the document (trace_json.cpp), with the few value forms a trace
// needs: strings (escaped), integers, microseconds with nanosecond
// decimals, addresses as hex strings, flags, and an "args" object.
//
//   EventText(out, first).text("name", "fillRandom").text("ph", "X")
//       .micros("ts", ns).number("pid", 1).args().number("bytes", 64);
//
// The object is closed when the EventText is destroyed.
//
// Thread-safety: not thread-safe; one writer per document.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "hooks/json_text.h"

namespace accel::trace::detail {

// Microseconds with nanosecond precision: "12.345".
inline void appendMicros(std::string& out, std::int64_t ns) {
  char text[32];
  const bool negative = ns < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::snprintf(text, sizeof text, "%s%llu.%03llu", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1000),
                static_cast<unsigned long long>(magnitude % 1000));
  out += text;
}

inline void appendAddress(std::string& out, std::uint64_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "\"0x%llx\"",
                static_cast<unsigned long long>(address));
  out += text;
}

// Builds one event object; fields are appended in the order called.
class EventText {
 public:
  EventText(std::string& out, bool& first) : out_(out) {
    out_ += first ? "\n" : ",\n";
    first = false;
    out_ += '{';
  }
  ~EventText() {
    if (in_args_) out_ += '}';
    out_ += '}';
  }
  EventText(const EventText&) = delete;
  EventText& operator=(const EventText&) = delete;

  // A complete event ("ph": "X"): its name and category, where it starts
  // (`ts_ns`, relative to the document's origin), how long it lasted (never
  // below 0), and the process and thread track it is drawn on.
  EventText& span(std::string_view name, std::string_view cat, std::int64_t ts_ns,
                  std::int64_t dur_ns, std::int64_t pid, std::int64_t tid) {
    return text("name", name)
        .text("cat", cat)
        .text("ph", "X")
        .micros("ts", ts_ns)
        .micros("dur", dur_ns < 0 ? 0 : dur_ns)
        .number("pid", pid)
        .number("tid", tid);
  }
  // An instant event of one thread's track ("ph": "i", "s": "t"): its name
  // and category, when it happened (`ts_ns`, relative to the document's
  // origin), and the process and thread track it is drawn on.
  EventText& instant(std::string_view name, std::string_view cat, std::int64_t ts_ns,
                     std::int64_t pid, std::int64_t tid) {
    return text("name", name)
        .text("cat", cat)
        .text("ph", "i")
        .text("s", "t")
        .micros("ts", ts_ns)
        .number("pid", pid)
        .number("tid", tid);
  }
  EventText& text(std::string_view key, std::string_view value) {
    field(key);
    accel::detail::appendJsonString(out_, value);
    return *this;
  }
  EventText& number(std::string_view key, std::int64_t value) {
    field(key);
    out_ += std::to_string(value);
    return *this;
  }
  EventText& micros(std::string_view key, std::int64_t ns) {
    field(key);
    appendMicros(out_, ns);
    return *this;
  }
  EventText& address(std::string_view key, std::uint64_t value) {
    field(key);
    appendAddress(out_, value);
    return *this;
  }
  EventText& flag(std::string_view key, bool value) {
    field(key);
    out_ += value ? "true" : "false";
    return *this;
  }
  // The fields after this one go into "args".
  EventText& args() {
    field("args");
    out_ += '{';
    in_args_ = true;
    comma_ = false;
    return *this;
  }

 private:
  void field(std::string_view key) {
    if (comma_) out_ += ',';
    comma_ = true;
    accel::detail::appendJsonString(out_, key);
    out_ += ':';
  }
  std::string& out_;
  bool comma_ = false;
  bool in_args_ = false;
};

}  // namespace accel::trace::detail
