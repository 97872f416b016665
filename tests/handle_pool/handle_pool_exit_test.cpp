// Exit-time behaviour of handle pools, checked in child processes
// (handle_pool_exit_scenarios): threads still holding handles when main
// returns, a thread that finishes during exit, reserving during exit.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <initializer_list>
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

// Success when the child's output holds every one of `parts`; the failure
// names each missing part and shows the output.
::testing::AssertionResult outputHasAll(const ChildResult& child,
                                        std::initializer_list<std::string> parts) {
  std::string missing;
  for (const std::string& part : parts) {
    if (!contains(child.output, part)) missing += "\n  \"" + part + "\"";
  }
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the output lacks:" << missing << "\noutput:\n"
                                       << child.output;
}

// The line a scenario prints when `who` is refused a handle for `device`
// once the process began to exit.
std::string refusalDuringExit(const std::string& who, int device) {
  return who +
         ": NotAvailable: reserving a handle from the 'exit-test' pool for device " +
         std::to_string(device) + " after the process began to exit";
}

TEST(HandlePoolExit, HandlesHeldOrPooledAtExitAreNotDestroyed) {
  const ChildResult& child = scenarioResult("held-at-exit");
  EXPECT_EQ(child.exit_status, 0) << child.output;
  EXPECT_FALSE(contains(child.output, "DESTROY DURING EXIT")) << child.output;
  // Device 3: the main thread's handle went back beyond the idle cap of 1
  // during exit, and was pooled rather than destroyed.
  EXPECT_TRUE(outputHasAll(
      child, {"exiting=1", "at exit device 0: created=6 destroyed=1 in_use=4 available=1",
              "at exit device 1: created=5 destroyed=0 in_use=4 available=1",
              "at exit device 3: created=2 destroyed=0 in_use=0 available=2", "\nOK\n"}));
}

TEST(HandlePoolExit, ReserveDuringExitIsNotAvailableNamingTheProblem) {
  const ChildResult& child = scenarioResult("held-at-exit");
  EXPECT_EQ(child.exit_status, 0) << child.output;
  // Both a device this thread held and one it never reserved are refused.
  EXPECT_TRUE(outputHasAll(
      child, {refusalDuringExit("atexit", 0), refusalDuringExit("atexit", 9)}));
  EXPECT_FALSE(contains(child.output, "returned a handle")) << child.output;
}

TEST(HandlePoolExit, ThreadFinishingAfterMainReturnsPoolsItsHandlesWithoutCrash) {
  const ChildResult& child = scenarioResult("thread-exits-after-main");
  EXPECT_EQ(child.exit_status, 0) << child.output;
  EXPECT_FALSE(contains(child.output, "DESTROY DURING EXIT")) << child.output;
  // Idle cap 0, yet returned to the pool: destroy is off once exit began.
  EXPECT_TRUE(outputHasAll(
      child, {"worker finished=1", refusalDuringExit("worker", 0),
              refusalDuringExit("worker", 5),
              "at exit device 0: created=1 destroyed=0 in_use=0 available=1",
              "at exit device 2: created=1 destroyed=0 in_use=0 available=1", "\nOK\n"}));
}

}  // namespace
