// ForkSafeLazy: built once; a fork child never waits for a build that was
// running on another thread at the fork (it gets the abandoned value), and
// a child of a process that never built it builds its own.
//
// The same cases run twice: on the core's (accel/kit/fork_safe_lazy.h,
// settled through the core's fork callbacks) and, built with
// ACCEL_TEST_ADAPTER_LAZY, on the plugin adapter's
// (accel/adapter/fork_safe_lazy.h, settled by its own pthread_atfork
// handler), each in a program of its own.
#if defined(ACCEL_TEST_ADAPTER_LAZY)
#include "accel/adapter/fork_safe_lazy.h"
#define ACCEL_LAZY_SUITE AdapterForkSafeLazy
#else
#include "accel/kit/fork_safe_lazy.h"
#define ACCEL_LAZY_SUITE ForkSafeLazy
#endif
#include "support/failing_allocation.h"
#include "support/forked_child.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>

namespace accel::kit {
namespace {

#if defined(ACCEL_TEST_ADAPTER_LAZY)
using adapter::ForkSafeLazy;
#endif

struct Value {
  std::string text;
};

// A build that waits for the gate, standing in for a driver listing devices.
std::mutex g_mutex;
std::condition_variable g_cv;
bool g_entered = false;
bool g_open = false;
std::atomic<int> g_builds{0};

const Value* gatedBuild() noexcept {
  g_builds.fetch_add(1);
  std::unique_lock<std::mutex> lock(g_mutex);
  g_entered = true;
  g_cv.notify_all();
  g_cv.wait(lock, [] { return g_open; });
  return new Value{"built"};
}
const Value* abandonedByFork() noexcept { return new Value{"abandoned"}; }
const Value* quickBuild() noexcept { return new Value{"built here"}; }

constinit ForkSafeLazy<Value> g_gated;
constinit ForkSafeLazy<Value> g_quick;

// The first build of any ForkSafeLazy in the process, gated like gatedBuild.
std::mutex g_first_mutex;
std::condition_variable g_first_cv;
bool g_first_entered = false;
bool g_first_open = false;

const Value* gatedFirstBuild() noexcept {
  std::unique_lock<std::mutex> lock(g_first_mutex);
  g_first_entered = true;
  g_first_cv.notify_all();
  g_first_cv.wait(lock, [] { return g_first_open; });
  return new Value{"built"};
}
// Disarms the failing allocation first: only what the lazy does before it
// may meet it.
const Value* abandonedFirst() noexcept {
  accel::testing::allowAllocations();
  return new Value{"abandoned"};
}

constinit ForkSafeLazy<Value> g_first;

// The child's callback exists before any build begins (registered when the
// library loads), so it does not depend on what the first build can
// allocate: the first build of the process here meets an allocation that
// fails, and a child forked during it still gets the abandoned value.
// First in this file: it needs a process in which no lazy was built yet.
TEST(ACCEL_LAZY_SUITE, AChildForkedDuringTheFirstBuildOfAllIsSettledWithoutMemoryThen) {
  std::thread building([] {
    accel::testing::failNextAllocation();
    EXPECT_EQ((g_first.get<&gatedFirstBuild, &abandonedFirst>().text), "built");
  });
  {
    std::unique_lock<std::mutex> lock(g_first_mutex);
    g_first_cv.wait(lock, [] { return g_first_entered; });
  }
  const int code = accel::testing::runInChildBounded([] {
    return g_first.get<&gatedFirstBuild, &abandonedFirst>().text == "abandoned" ? 0 : 1;
  });
  {
    std::lock_guard<std::mutex> lock(g_first_mutex);
    g_first_open = true;
  }
  g_first_cv.notify_all();
  building.join();
  EXPECT_EQ(code, 0) << "1: the child got another value; 124: it hung";
}

TEST(ACCEL_LAZY_SUITE, AChildForkedDuringTheBuildGetsTheAbandonedValue) {
  const Value* parent_value = nullptr;
  std::thread building(
      [&] { parent_value = &g_gated.get<&gatedBuild, &abandonedByFork>(); });
  {
    std::unique_lock<std::mutex> lock(g_mutex);
    g_cv.wait(lock, [] { return g_entered; });
  }
  // The gate never opens in the child: its thread is the parent's.
  const int code = accel::testing::runInChildBounded([] {
    return g_gated.get<&gatedBuild, &abandonedByFork>().text == "abandoned" ? 0 : 1;
  });
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_open = true;
  }
  g_cv.notify_all();
  building.join();
  EXPECT_EQ(code, 0) << "1: the child got another value; 124: it hung";
  ASSERT_NE(parent_value, nullptr);
  EXPECT_EQ(parent_value->text, "built");
  const Value& again = g_gated.get<&gatedBuild, &abandonedByFork>();
  EXPECT_EQ(&again, parent_value);
  EXPECT_EQ(g_builds.load(), 1);
}

TEST(ACCEL_LAZY_SUITE, AChildOfAProcessThatNeverBuiltItBuildsItsOwn) {
  const int code = accel::testing::runInChildBounded([] {
    return g_quick.get<&quickBuild, &abandonedByFork>().text == "built here" ? 0 : 1;
  });
  EXPECT_EQ(code, 0);
  const Value& value = g_quick.get<&quickBuild, &abandonedByFork>();
  EXPECT_EQ(value.text, "built here");
}

}  // namespace
}  // namespace accel::kit
