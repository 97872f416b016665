// runCommand: runs a shell command line and returns its standard output, for
// the tests that drive the `accel` tool and headless Chromium as a user would.
//
// Thread-safety: as popen.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace accel::memory::testing {

// Output of `command` (a /bin/sh line); `status` receives its exit status, or
// -1 when it could not be started.
inline std::string runCommand(const std::string& command, int& status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    status = -1;
    return {};
  }
  std::string out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int raw = pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

}  // namespace accel::memory::testing
