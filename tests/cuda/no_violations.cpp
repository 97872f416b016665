// Linked into every test program that runs on the runtime double: a test
// fails when the double recorded a violation while it ran (misuse that a GPU
// reports only later, as an asynchronous fault, such as a kernel touching
// freed or unmapped memory), whether or not the test itself looks.
#include <gtest/gtest.h>

#include "cuda_double.h"

namespace {

class NoViolations final : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    cuda_double_reset_violations();
  }
  // Listeners' OnTestEnd run in reverse order: this one, appended last, runs
  // before the printer, so the failure shows as the test's.
  void OnTestEnd(const ::testing::TestInfo&) override {
    char text[512] = {};
    const int count = cuda_double_violations(text, sizeof text);
    if (count != 0) {
      ADD_FAILURE() << "the CUDA runtime double recorded " << count
                    << " violation(s) during this test (a fault on a GPU); the last: "
                    << text;
    }
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new NoViolations);
  return true;
}();

}  // namespace
