#include "tool_run.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace accel::tooltest {

ToolRun runTool(const std::string& args, const std::string& env, Stderr errors) {
  const char* redirect = errors == Stderr::Merge     ? " 2>&1"
                         : errors == Stderr::Discard ? " 2>/dev/null"
                                                     : " 2>&1 >/dev/null";
  std::string command = "env -u ACCEL_PLUGINS -u ACCEL_PLUGIN_PATH -u ACCEL_AUTOLOAD " +
                        env + " '" ACCEL_TOOL_PATH "' " + args + redirect;
  ToolRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    run.output.append(buffer, n);
  int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string lastLine(const std::string& text) {
  std::size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return {};
  std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

std::string writeTempFile(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out.flush()) {
    throw std::runtime_error("cannot write " + path);
  }
  return path;
}

}  // namespace accel::tooltest
