// Helpers shared by the plugin tests: where the test plugins are, scratch
// directories, and running this test binary again as a child process with a
// chosen environment (autoload runs once per process, so each autoload
// scenario gets a process of its own).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace accel::plugtest {

// ACCEL_TEST_PLUGIN_DIR + "/" + file_name.
std::string testPluginPath(const std::string& file_name);

// A fresh directory under the system temp dir, removed (with its contents)
// by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  // Copies a test plugin into the directory under `as_name`; returns the new path.
  std::string copyPlugin(const std::string& file_name, const std::string& as_name) const;

 private:
  std::string path_;
};

struct ChildResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs this binary with --gtest_filter=`filter` and the current environment,
// minus every ACCEL_* variable, plus `env`. Waits for it to exit.
ChildResult runChild(const std::string& filter,
                     const std::map<std::string, std::string>& env);

// Number of non-overlapping occurrences of `needle` in `haystack`.
int countOccurrences(const std::string& haystack, const std::string& needle);

}  // namespace accel::plugtest
