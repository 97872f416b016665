// CheckReporter: the output of `accel check`, a GoogleTest event listener.
//
// A line per backend naming what it declares and, for a plugin's backend,
// the plugin and the plugin API it and the core agreed on; one line per
// conformance case (pass, FAIL, skip with its reason), the
// failure messages under a failed case, and at the end a summary per backend
// that names the broken hooks and the *Impl to fix or override for each: the
// hook a failed case blamed (a hook whose *Impl is missing, a precondition
// hook that misbehaved), else the hook the case is about (the first it lists,
// see accel::conformance::CaseInfo).
//
// Thread-safety: GoogleTest may report failures from the threads a case
// starts; the listener serialises them.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace accel::tool {

class CheckReporter : public ::testing::EmptyTestEventListener {
 public:
  explicit CheckReporter(std::ostream& out) : out_(out) {}

  void OnTestStart(const ::testing::TestInfo& info) override;
  void OnTestPartResult(const ::testing::TestPartResult& result) override;
  void OnTestEnd(const ::testing::TestInfo& info) override;
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override;

  // Backends with at least one failed case, in the order they ran.
  [[nodiscard]] std::vector<std::string> failedBackends() const;

 private:
  struct Tally {
    int passed = 0;
    int failed = 0;
    int skipped = 0;
    // Broken hook -> the failed cases that name it first, in order.
    std::vector<std::pair<std::string, std::vector<std::string>>> brokenHooks;
  };

  Tally& tallyFor(const std::string& backend);

  std::ostream& out_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, Tally>> tallies_;  // in run order
  std::string currentBackend_;
  std::vector<std::string> failures_;  // of the running test
  std::string skipReason_;
};

}  // namespace accel::tool
