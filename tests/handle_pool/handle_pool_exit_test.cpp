// Exit-time behaviour of handle pools, checked in child processes
// (handle_pool_exit_scenarios): threads still holding handles when main
// returns, a thread that finishes during exit, reserving during exit.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <map>
#include <string>

namespace {

struct ChildResult {
  int exit_status = -1;  // -1 when the child did not exit normally
  std::string output;
};

ChildResult runScenario(const std::string& scenario) {
  const std::string command =
      std::string("'") + ACCEL_HANDLE_POOL_SCENARIOS + "' " + scenario + " 2>&1";
  std::fflush(nullptr);  // the child must not inherit unflushed output
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  ChildResult result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
}

// Each scenario runs once per test binary; several tests read its output
// (under TSan a child takes a second to exit, waiting on its parked threads).
const ChildResult& scenarioResult(const std::string& scenario) {
  static std::map<std::string, ChildResult> results;
  auto it = results.find(scenario);
  if (it == results.end()) it = results.emplace(scenario, runScenario(scenario)).first;
  return it->second;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HandlePoolExit, HandlesHeldOrPooledAtExitAreNotDestroyed) {
  const ChildResult& child = scenarioResult("held-at-exit");
  EXPECT_EQ(child.exit_status, 0) << child.output;
  EXPECT_FALSE(contains(child.output, "DESTROY DURING EXIT")) << child.output;
  EXPECT_TRUE(contains(child.output, "exiting=1")) << child.output;
  // Device 3: the main thread's handle went back beyond the idle cap of 1
  // during exit, and was pooled rather than destroyed.
  EXPECT_TRUE(contains(child.output,
                       "at exit device 0: created=6 destroyed=1 in_use=4 available=1"))
      << child.output;
  EXPECT_TRUE(contains(child.output,
                       "at exit device 1: created=5 destroyed=0 in_use=4 available=1"))
      << child.output;
  EXPECT_TRUE(contains(child.output,
                       "at exit device 3: created=2 destroyed=0 in_use=0 available=2"))
      << child.output;
  EXPECT_TRUE(contains(child.output, "\nOK\n")) << child.output;
}

TEST(HandlePoolExit, ReserveDuringExitIsNotAvailableNamingTheProblem) {
  const ChildResult& child = scenarioResult("held-at-exit");
  EXPECT_EQ(child.exit_status, 0) << child.output;
  // Both a device this thread held and one it never reserved are refused.
  for (const char* device : {"device 0 ", "device 9 "}) {
    EXPECT_TRUE(contains(child.output,
                         std::string("atexit: NotAvailable: reserving a handle from "
                                     "the 'exit-test' pool for ") +
                             device + "after the process began to exit"))
        << child.output;
  }
  EXPECT_FALSE(contains(child.output, "returned a handle")) << child.output;
}

TEST(HandlePoolExit, ThreadFinishingAfterMainReturnsPoolsItsHandlesWithoutCrash) {
  const ChildResult& child = scenarioResult("thread-exits-after-main");
  EXPECT_EQ(child.exit_status, 0) << child.output;
  EXPECT_FALSE(contains(child.output, "DESTROY DURING EXIT")) << child.output;
  EXPECT_TRUE(contains(child.output, "worker finished=1")) << child.output;
  EXPECT_TRUE(contains(child.output,
                       "worker: NotAvailable: reserving a handle from the "
                       "'exit-test' pool for device 0 after the process began to exit"))
      << child.output;
  EXPECT_TRUE(contains(child.output,
                       "worker: NotAvailable: reserving a handle from the "
                       "'exit-test' pool for device 5 after the process began to exit"))
      << child.output;
  // Idle cap 0, yet returned to the pool: destroy is off once exit began.
  EXPECT_TRUE(contains(child.output,
                       "at exit device 0: created=1 destroyed=0 in_use=0 available=1"))
      << child.output;
  EXPECT_TRUE(contains(child.output,
                       "at exit device 2: created=1 destroyed=0 in_use=0 available=1"))
      << child.output;
  EXPECT_TRUE(contains(child.output, "\nOK\n")) << child.output;
}

}  // namespace
