// The recorded training traces of tools/traces/ (traces.cmake lists them),
// as the training-trace test and benchmark read them: names from the list
// the build passes, their short names, the traces themselves.
//
// Thread-safety: pure functions; loadRecordedTrace reads a file.
#pragma once

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "memreplay_trace.h"

namespace accel::tool {

// The names in a list "a,b,c" (file names without ".trace"). Throws
// nothing but std::bad_alloc.
[[nodiscard]] inline std::vector<std::string> recordedTraceNames(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    names.emplace_back(list.substr(0, comma));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return names;
}

// "pytorch_cpu_lstm_lm" -> "lstm_lm": the name without the common prefix,
// anything but letters and digits as '_' (usable in a test or row name).
[[nodiscard]] inline std::string shortTraceName(std::string_view name) {
  constexpr std::string_view kPrefix = "pytorch_cpu_";
  if (name.starts_with(kPrefix)) name.remove_prefix(kPrefix.size());
  std::string out(name);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

// The trace `name` of `directory`. Throws std::runtime_error naming the
// file when it cannot be opened, and what parseTrace throws.
[[nodiscard]] inline Trace loadRecordedTrace(std::string_view directory,
                                             std::string_view name) {
  const std::string path = std::string(directory) + "/" + std::string(name) + ".trace";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open the recorded trace " + path);
  return parseTrace(in, path);
}

}  // namespace accel::tool
