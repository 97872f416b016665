// Running the built `accel` tool as a user would: a subprocess, its exit
// status and output. Shared by the tool's test files.
#pragma once

#include <string>

namespace accel::tooltest {

struct ToolRun {
  int status = -1;  // exit status; -1 if it did not exit normally
  std::string output;
};

enum class Stderr { Merge, Discard, Only };

// Runs the tool with `args` in a clean plugin environment (none of the
// ACCEL_* variables, unless `env` sets some), as `env` `accel` `args`.
// Stderr::Only keeps stderr and drops stdout.
ToolRun runTool(const std::string& args, const std::string& env = "",
                Stderr errors = Stderr::Merge);

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The last non-empty line of `text`.
std::string lastLine(const std::string& text);

// Writes `content` to ::testing::TempDir() + `name` and returns that path.
// Throws std::runtime_error when the file cannot be written.
std::string writeTempFile(const std::string& name, const std::string& content);

}  // namespace accel::tooltest
