// Fork safety: a backend initialised before fork() is poisoned in the child.
//
// Each test forks; the child runs plain checks (no gtest assertions, which
// would report in the wrong process) and _exits with the number of the first
// failed check, which the parent turns into a test failure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/fork.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "support/sanitizers.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using testing::registerTestBackend;
using testing::TestHooks;

// The threads of this process (the entries of /proc/self/task).
int threadCount() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

// Runs `child` in a forked process; returns its exit code (or 100 + signal).
// Under ThreadSanitizer a child of a multi-threaded process dies when it
// starts a thread (a backend's discovery does), and an earlier discovery's
// detached thread may still be ending when a case forks: the fork waits for
// it (up to 10 s; a thread that stays is the test's failure to show).
// ThreadSanitizer's own background thread, which it starts with the
// process's first thread, is no thread of the program's: two threads are
// the main thread and it.
int runInChild(const std::function<int()>& child) {
  if (testing::kThreadSanitizer) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (threadCount() > 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  pid_t pid = ::fork();
  if (pid == -1) return -1;
  if (pid == 0) {
    int code = 99;
    try {
      code = child();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -2;
  if (WIFSIGNALED(status)) return 100 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ForkTest, BackendInitialisedBeforeForkFailsClearlyInTheChild) {
  TestHooks& hooks = registerTestBackend("forkdev", 2);
  DeviceType type = hooks.deviceType();
  globalContext().lazyInitDevice(type);
  AcceleratorHooks* real = &getHooks(type);

  int code = runInChild([&]() -> int {
    if (!isPoisonedByFork(type)) return 1;
    AcceleratorHooks& child_hooks = getHooks(type);
    if (&child_hooks == real) return 2;
    try {
      (void)child_hooks.getCurrentDevice();
      return 3;
    } catch (const DeviceError& e) {
      const std::string message = e.message();
      if (!contains(message, std::string(hookInfo(HookId::getCurrentDevice).name) +
                                 "(): 'forkdev' was initialised before fork()")) {
        return 4;
      }
      if (!contains(message, "pid " + std::to_string(::getpid()))) return 5;
      if (!contains(message, "fork+exec")) return 6;
    }
    // Every non-probe hook fails the same way, whatever its group.
    try {
      (void)child_hooks.getNewStream(0);
      return 7;
    } catch (const DeviceError&) {
    }
    try {
      (void)globalContext().defaultGenerator(Device(type, 0));
      return 8;
    } catch (const DeviceError&) {
    }
    // Probes stay benign: the type is known and built, but not usable.
    if (!child_hooks.isBuilt()) return 9;
    if (child_hooks.isAvailable()) return 10;
    if (child_hooks.deviceCount() != 2) return 11;
    if (child_hooks.hasPrimaryContext(0)) return 12;
    int local = 0;
    if (globalContext().isPinnedPtr(&local, type)) return 13;
    // The context treats the type as not initialised, and says why it
    // cannot initialise it again.
    if (globalContext().isInitialized(type)) return 14;
    try {
      globalContext().lazyInitDevice(type);
      return 15;
    } catch (const DeviceError& e) {
      if (!contains(e.message(), "'forkdev' was initialised before fork()")) return 16;
    }
    return 0;
  });
  EXPECT_EQ(code, 0) << "child failed check " << code;

  // The parent is untouched.
  EXPECT_FALSE(isPoisonedByFork(type));
  EXPECT_EQ(&getHooks(type), real);
  EXPECT_NO_THROW((void)getHooks(type).getCurrentDevice());
}

// Worker processes forked from a parent that used a device commonly reseed
// themselves; that must work and must not touch the poisoned backend.
TEST(ForkTest, ManualSeedInTheChildSkipsPoisonedBackends) {
  TestHooks& hooks = registerTestBackend("fork_seed", 1);
  globalContext().lazyInitDevice(hooks.deviceType());
  int code = runInChild([&]() -> int {
    try {
      globalContext().manualSeed(1234);
    } catch (const Error&) {
      return 1;
    }
    if (globalContext().defaultGenerator(Device(DeviceType::CPU)).currentSeed() != 1234)
      return 2;
    return 0;
  });
  EXPECT_EQ(code, 0) << "child failed check " << code;
}

TEST(ForkTest, BackendNotInitialisedBeforeForkWorksInTheChild) {
  TestHooks& initialised = registerTestBackend("fork_init", 1);
  TestHooks& fresh = registerTestBackend("fork_fresh", 2);
  globalContext().lazyInitDevice(initialised.deviceType());

  int code = runInChild([&]() -> int {
    if (isPoisonedByFork(fresh.deviceType())) return 1;
    if (&getHooks(fresh.deviceType()) != &fresh) return 2;
    globalContext().lazyInitDevice(fresh.deviceType());
    fresh.setCurrentDevice(1);
    if (fresh.getCurrentDevice() != 1) return 3;
    if (!globalContext().isInitialized(fresh.deviceType())) return 4;
    return 0;
  });
  EXPECT_EQ(code, 0) << "child failed check " << code;
}

TEST(ForkTest, ForkOfAForkedChildStaysPoisoned) {
  TestHooks& hooks = registerTestBackend("fork_twice", 1);
  globalContext().lazyInitDevice(hooks.deviceType());
  int code = runInChild([&]() -> int {
    int grandchild = runInChild([&]() -> int {
      try {
        (void)getHooks(hooks.deviceType()).getCurrentDevice();
        return 1;
      } catch (const DeviceError& e) {
        return contains(e.message(), "was initialised before fork()") ? 0 : 2;
      }
    });
    return grandchild == 0 ? 0 : 10 + grandchild;
  });
  EXPECT_EQ(code, 0) << "child failed check " << code;
}

// An initialised kit backend has getDefaultGenerator served inline by the
// core, past its impl. In the child the real object itself refuses (a
// caller may hold it from before the fork), so neither the inline path nor
// the impl (armed here to fail) is reached: the core's fork refusal is.
TEST(ForkTest, ChildWithdrawsTheInlineDefaultGeneratorOfAPoisonedBackend) {
  TestHooks& hooks = registerTestBackend("fork_generator", 1);
  globalContext().lazyInitDevice(hooks.deviceType());
  hooks.failHook(HookId::getDefaultGenerator);
  const Generator& served = hooks.getDefaultGenerator(0);  // inline: no failure
  int code = runInChild([&]() -> int {
    if (!isPoisonedByFork(hooks.deviceType())) return 1;
    try {
      (void)hooks.getDefaultGenerator(0);
      return 2;
    } catch (const DeviceError& e) {
      return contains(e.message(), "'fork_generator' was initialised before fork()") ? 0
                                                                                     : 3;
    }
  });
  hooks.clearHookFailures();
  EXPECT_EQ(code, 0) << "child failed check " << code;
  EXPECT_EQ(&hooks.getDefaultGenerator(0), &served) << "the parent is untouched";
}

// Backends' after_in_child callbacks run after the core poisoned the
// backends, so a callback that looks at its own hooks sees the stand-in.
DeviceType g_callback_type{};
std::atomic<int> g_callback_saw{-1};  // -1 not run, 0 unpoisoned, 1 poisoned

TEST(ForkTest, BackendCallbacksInTheChildRunAfterThePoisoning) {
  TestHooks& hooks = registerTestBackend("fork_callback", 1);
  g_callback_type = hooks.deviceType();
  registerForkCallbacks({nullptr, nullptr, []() noexcept {
                           g_callback_saw = isPoisonedByFork(g_callback_type) &&
                                                    &getHooks(g_callback_type) !=
                                                        &absentHooks(g_callback_type)
                                                ? 1
                                                : 0;
                         }});
  globalContext().lazyInitDevice(hooks.deviceType());
  int code =
      runInChild([&]() -> int { return g_callback_saw == 1 ? 0 : 2 + g_callback_saw; });
  EXPECT_EQ(code, 0) << "child failed check " << code;
}

}  // namespace
}  // namespace accel
