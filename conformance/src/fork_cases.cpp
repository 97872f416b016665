// fork(): what a child may do with a backend its parent discovered or
// initialised (docs/lifecycle.md, "fork()").
//
// Each case forks. The child runs a check and reports through its exit
// status and a pipe (a line saying what went wrong); the parent waits for
// that report with a bounded wait on the pipe and kills a child that does
// not answer: a child that hangs fails the case, it never hangs the suite.
// The child ends with _exit, so that nothing of the parent's (gtest's state,
// static destructors, the device) runs twice.
//
// The discovery cases come first of the whole suite (conformance_suite.cpp),
// before any case initialises the backend, so that "discovered but not
// initialised" is what the first one sees when the suite runs in order.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "accel/context.h"
#include "accel/hooks_table.h"
#include "conformance_case.h"

namespace accel::conformance::detail {
namespace fork_cases {
namespace {

// Long enough for any refusal (it is immediate), short enough for a suite.
constexpr int kChildAnswerMs = 20'000;

struct ChildResult {
  bool answered = false;  // exited on its own within the bound
  int status = -1;        // its exit status when it did
  std::string report;     // what it wrote
};

// Runs `check` in a forked child; its return value is the child's exit
// status (0: as expected), `report` what it says otherwise.
ChildResult inForkedChild(const std::function<int(std::string& report)>& check) {
  int fds[2];
  ChildResult result;
  if (::pipe(fds) != 0) {
    result.report = "pipe() failed";
    return result;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    result.report = "fork() failed";
    return result;
  }
  if (child == 0) {
    ::close(fds[0]);
    std::string report;
    int status = 90;
    try {
      status = check(report);
    } catch (const std::exception& e) {
      report = "the check threw: " + std::string(thrownText(e));
      status = 91;
    } catch (...) {
      status = 92;
    }
    report += '\n';
    (void)!::write(fds[1], report.data(), report.size());
    ::_exit(status);
  }
  ::close(fds[1]);
  // The child's report ends with a newline, then the pipe closes: wait for
  // the end of the pipe, bounded.
  std::string text;
  bool closed = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, kChildAnswerMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;  // no answer within the bound
    char buffer[512];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      closed = true;
      break;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  if (!closed) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    result.report = "the child did not finish within " +
                    std::to_string(kChildAnswerMs / 1000) +
                    " s (it hung; killed). It had written: " + text;
    return result;
  }
  ::waitpid(child, &status, 0);
  result.answered = true;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.report = text;
  return result;
}

// The child's check that `call` is refused with the fork DeviceError naming
// the backend.
int expectForkRefusal(std::string_view backend, const char* what,
                      const std::function<void()>& call, std::string& report) {
  try {
    call();
  } catch (const DeviceError& e) {
    const std::string_view message = errorMessage(e);
    if (message.find(backend) != std::string_view::npos &&
        message.find("before fork()") != std::string_view::npos)
      return 0;
    report = std::string(what) + " threw DeviceError without the backend's name and " +
             "\"before fork()\": " + std::string(message);
    return 2;
  } catch (const std::exception& e) {
    report = std::string(what) + " threw another error: " + thrownText(e);
    return 3;
  }
  report = std::string(what) + " succeeded in a child of a process that had " +
           "discovered the backend (expected the \"before fork()\" DeviceError)";
  return 4;
}

void expectChildOk(const ChildResult& r, const char* rule) {
  EXPECT_TRUE(r.answered && r.status == 0)
      << rule << ": "
      << (r.answered
              ? "the child's check failed (exit " + std::to_string(r.status) + "): "
              : std::string())
      << r.report;
}

// A child forked after the parent's probes discovered the devices (the
// driver may have started threads then) is refused like one forked after
// initialisation; its probes answer without the backend; the parent goes on.
void childForkedAfterDiscoveryIsRefused(AcceleratorHooks& hooks) {
  const DeviceType type = hooks.deviceType();
  const int count = hooks.deviceCount();  // discovery
  const bool available = hooks.isAvailable();
  const std::string name(hooks.name());
  ChildResult r = inForkedChild([&](std::string& report) {
    AcceleratorHooks& child_hooks = getHooks(type);
    if (child_hooks.isAvailable()) {
      report = std::string(hookName(HookId::isAvailable)) + "() is true in the child";
      return 1;
    }
    if (!isPoisonedByFork(type)) {
      report = "isPoisonedByFork() is false in the child";
      return 5;
    }
    return expectForkRefusal(
        name, "Context::lazyInitDevice", [&] { globalContext().lazyInitDevice(type); },
        report);
  });
  blame(HookId::deviceCount);
  expectChildOk(r, "a child forked after discovery must be refused");
  EXPECT_EQ(hooks.deviceCount(), count) << "the parent's probes changed after a fork";
  EXPECT_EQ(hooks.isAvailable(), available) << "the parent's probes changed after a fork";
}

// A fork while another thread is inside the probes: the child must not wait
// for anything that thread held (a driver lock, a guard of a static being
// built). Its probes answer and its use is refused, within the bound.
void forkWhileAnotherThreadProbesDoesNotHang(AcceleratorHooks& hooks) {
  const DeviceType type = hooks.deviceType();
  const std::string name(hooks.name());
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::thread prober([&] {
    while (!stop.load(std::memory_order_acquire)) {
      (void)hooks.isAvailable();
      (void)hooks.deviceCount();
      rounds.fetch_add(1, std::memory_order_release);
    }
  });
  while (rounds.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  ChildResult r = inForkedChild([&](std::string& report) {
    AcceleratorHooks& child_hooks = getHooks(type);
    (void)child_hooks.deviceCount();
    if (child_hooks.isAvailable()) {
      report = std::string(hookName(HookId::isAvailable)) + "() is true in the child";
      return 1;
    }
    // The reference the parent's thread was using, kept across the fork.
    (void)hooks.deviceCount();
    (void)hooks.isAvailable();
    return expectForkRefusal(
        name, "Context::lazyInitDevice", [&] { globalContext().lazyInitDevice(type); },
        report);
  });
  stop.store(true, std::memory_order_release);
  prober.join();
  blame(HookId::isAvailable);
  expectChildOk(r, "a child forked while another thread probed must not hang");
}

// A hooks reference obtained before the fork bypasses getHooks' stand-in:
// the object itself must refuse in the child.
void inheritedHooksReferenceIsRefused(AcceleratorHooks& hooks) {
  const std::string name(hooks.name());
  ChildResult r = inForkedChild([&](std::string& report) {
    if (hooks.isAvailable()) {
      report = std::string(hookName(HookId::isAvailable)) +
               "() on the kept reference is true in the child";
      return 1;
    }
    const std::string allocator_call =
        std::string(hookName(HookId::getDeviceAllocator)) + "(0) on the kept reference";
    int status = expectForkRefusal(
        name, allocator_call.c_str(), [&] { (void)hooks.getDeviceAllocator(0); }, report);
    if (status != 0 || !hooks.supports(hookInfo(HookId::getNewStream).group))
      return status;
    const std::string stream_call =
        std::string(hookName(HookId::getNewStream)) + "(0) on the kept reference";
    return expectForkRefusal(
        name, stream_call.c_str(), [&] { (void)hooks.getNewStream(0); }, report);
  });
  blame(HookId::init);
  expectChildOk(r, "a hooks reference kept across fork must refuse in the child");
  EXPECT_NO_THROW((void)hooks.getDeviceAllocator(0)) << "the parent after the fork";
}

// Allocators obtained before the fork: the device allocator and the pinned
// one must refuse new allocations in the child (their source is the
// driver, whose threads are gone) instead of handing out memory whose first
// copy hangs.
void inheritedAllocatorsAreRefused(AcceleratorHooks& hooks) {
  const std::string name(hooks.name());
  Allocator& device = hooks.getDeviceAllocator(0);
  { DataPtr warm = device.allocate(256); }
  Allocator* pinned = nullptr;
  if (hooks.supports(hookInfo(HookId::getPinnedMemoryAllocator).group)) {
    try {
      pinned = &hooks.getPinnedMemoryAllocator();
      DataPtr warm = pinned->allocate(256);
    } catch (const NotSupported&) {
      pinned = nullptr;  // optional for a backend without pinned memory
    }
  }
  ChildResult r = inForkedChild([&](std::string& report) {
    int status = expectForkRefusal(
        name, "the device allocator's allocate(1 MiB)",
        [&] { DataPtr p = device.allocate(1 << 20); }, report);
    if (status != 0 || pinned == nullptr) return status;
    return expectForkRefusal(
        name, "the pinned allocator's allocate(1 MiB)",
        [&] { DataPtr p = pinned->allocate(1 << 20); }, report);
  });
  blame(HookId::getDeviceAllocator);
  expectChildOk(r, "allocators kept across fork must refuse in the child");
  EXPECT_NO_THROW({ DataPtr p = device.allocate(1 << 20); })
      << "the parent after the fork";
}

}  // namespace
}  // namespace fork_cases

std::vector<ConformanceCase> forkDiscoveryCases() {
  using namespace fork_cases;
  using enum HookId;
  return {
      noDeviceCase("ForkAfterDiscoveryRefusesTheChild",
                   childForkedAfterDiscoveryIsRefused, {deviceCount, isAvailable, init}),
      noDeviceCase("ForkWhileAnotherThreadProbesDoesNotHang",
                   forkWhileAnotherThreadProbesDoesNotHang,
                   {isAvailable, deviceCount, init}),
  };
}

std::vector<ConformanceCase> forkDeviceCases() {
  using namespace fork_cases;
  using enum HookId;
  return {
      deviceCase("ForkRefusesAHooksReferenceKeptAcrossIt",
                 inheritedHooksReferenceIsRefused,
                 {init, getDeviceAllocator, getNewStream}),
      deviceCase("ForkRefusesAllocatorsKeptAcrossIt", inheritedAllocatorsAreRefused,
                 {getDeviceAllocator, getPinnedMemoryAllocator}),
  };
}

}  // namespace accel::conformance::detail
