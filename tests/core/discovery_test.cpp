// Discovery (docs/lifecycle.md, "Discovery" and "fork()"): the first probe
// that reaches a backend counts as starting it for fork, a child forked
// while another thread is inside that first discovery never waits for it,
// and the first discovery is bounded by ACCEL_DISCOVERY_TIMEOUT.
//
// The backend here is gated: its deviceCountImpl blocks until the test opens
// the gate, standing in for a driver that is slow (or hung) while it loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "support/forked_child.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

// A backend whose device count waits for the gate to open.
class GatedHooks final : public AcceleratorHooks {
 public:
  explicit GatedHooks(DeviceType type) : AcceleratorHooks(type, Capabilities{}) {}

  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Blocks until a probe is inside deviceCountImpl.
  void waitUntilEntered() const {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return entered_; });
  }
  [[nodiscard]] int calls() const { return calls_.load(); }

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return deviceCountImpl() > 0; }
  int deviceCountImpl() const override {
    calls_.fetch_add(1);
    std::unique_lock<std::mutex> lock(mutex_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    return 3;
  }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void initImpl() override {}

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  mutable bool entered_ = false;
  bool open_ = false;
  mutable std::atomic<int> calls_{0};
};

GatedHooks& registerGated(const char* name) {
  DeviceType type = registerDeviceType(name);
  return static_cast<GatedHooks&>(
      registerHooks(std::make_unique<GatedHooks>(type), "discovery test"));
}

bool refusedForFork(const std::function<void()>& call, const std::string& name) {
  try {
    call();
  } catch (const DeviceError& e) {
    return e.message().find("'" + name + "' was initialised before fork()") !=
           std::string::npos;
  } catch (...) {
  }
  return false;
}

TEST(DiscoveryTest, ForkAfterDiscoveryRefusesTheBackendInTheChild) {
  GatedHooks& hooks = registerGated("disc_after");
  hooks.open();
  ASSERT_EQ(hooks.deviceCount(), 3);  // discovered, never initialised
  ASSERT_FALSE(hooks.isInitialized());
  const DeviceType type = hooks.deviceType();
  const int calls = hooks.calls();
  int code = accel::testing::runInChildBounded([&]() -> int {
    if (!isPoisonedByFork(type)) return 1;
    if (getHooks(type).isAvailable()) return 2;
    if (getHooks(type).deviceCount() != 3) return 3;  // the count it last gave
    if (!refusedForFork([&] { globalContext().lazyInitDevice(type); }, "disc_after"))
      return 4;
    // The reference kept from before the fork refuses too, and its probes
    // answer without reaching the backend.
    if (hooks.isAvailable() || hooks.deviceCount() != 0) return 5;
    if (!refusedForFork([&] { hooks.init(); }, "disc_after")) return 6;
    if (!refusedForFork([&] { hooks.setCurrentDevice(0); }, "disc_after")) return 7;
    if (hooks.calls() != calls) return 8;
    if (hooks.discoveryProblem().find("before fork()") == std::string::npos) return 9;
    return 0;
  });
  EXPECT_EQ(code, 0) << "child failed check " << code;
  EXPECT_FALSE(isPoisonedByFork(type));
  EXPECT_NO_THROW(globalContext().lazyInitDevice(type)) << "the parent is untouched";
}

TEST(DiscoveryTest, ProbingNothingLeavesAForkChildFreeToUseTheBackend) {
  GatedHooks& hooks = registerGated("disc_untouched");
  hooks.open();
  const DeviceType type = hooks.deviceType();
  int code = accel::testing::runInChildBounded([&]() -> int {
    if (isPoisonedByFork(type)) return 1;
    globalContext().lazyInitDevice(type);
    return getHooks(type).deviceCount() == 3 ? 0 : 2;
  });
  EXPECT_EQ(code, 0) << "child failed check " << code;
}

// The gate stays closed in the child (the thread that would open it is the
// parent's): a child that asked the backend would wait for ever.
TEST(DiscoveryTest, ForkDuringTheFirstDiscoveryOnAnotherThreadDoesNotHangTheChild) {
  GatedHooks& hooks = registerGated("disc_during");
  const DeviceType type = hooks.deviceType();
  int parent_count = -1;
  std::thread discovering([&] { parent_count = hooks.deviceCount(); });
  hooks.waitUntilEntered();
  int code = accel::testing::runInChildBounded([&]() -> int {
    if (!isPoisonedByFork(type)) return 1;
    (void)getHooks(type).deviceCount();  // answers: never the backend
    if (getHooks(type).isAvailable()) return 2;
    if (hooks.deviceCount() != 0 || hooks.isAvailable()) return 3;
    if (!refusedForFork([&] { globalContext().lazyInitDevice(type); }, "disc_during"))
      return 4;
    return 0;
  });
  hooks.open();
  discovering.join();
  EXPECT_EQ(code, 0) << "child failed check " << code << " (124: it hung)";
  EXPECT_EQ(parent_count, 3);
}

TEST(DiscoveryTest, AFirstDiscoveryPastTheLimitAnswersNoDevicesAndSaysWhy) {
  ASSERT_EQ(::setenv("ACCEL_DISCOVERY_TIMEOUT", "0.2", 1), 0);
  GatedHooks& hooks = registerGated("disc_hung");
  EXPECT_EQ(hooks.deviceCount(), 0);
  EXPECT_FALSE(hooks.isAvailable());
  EXPECT_THAT(hooks.discoveryProblem(), HasSubstr("did not finish within 0.2 s"));
  EXPECT_THAT(hooks.discoveryProblem(), HasSubstr("ACCEL_DISCOVERY_TIMEOUT"));
  try {
    globalContext().lazyInitDevice(hooks.deviceType());
    ADD_FAILURE() << "expected NotAvailable while the discovery hangs";
  } catch (const NotAvailable& e) {
    EXPECT_THAT(e.message(), HasSubstr("did not finish within"));
  }
  // Once the driver answers, the backend is there.
  hooks.open();
  hooks.waitUntilEntered();
  int count = 0;
  while ((count = hooks.deviceCount()) == 0) std::this_thread::yield();
  EXPECT_EQ(count, 3);
  EXPECT_EQ(hooks.discoveryProblem(), "");
  EXPECT_NO_THROW(globalContext().lazyInitDevice(hooks.deviceType()));
  ::unsetenv("ACCEL_DISCOVERY_TIMEOUT");
}

// A limit far past any real wait means no bound in practice: it must not
// wrap the deadline (nanoseconds of steady_clock) into the past, which made
// every first discovery give up at once with "did not finish within 1e+10 s".
TEST(DiscoveryTest, AHugeLimitWaitsInsteadOfGivingUpAtOnce) {
  const std::pair<const char*, const char*> cases[] = {{"1e10", "disc_huge_a"},
                                                       {"1e308", "disc_huge_b"}};
  for (const auto& [huge, name] : cases) {
    SCOPED_TRACE(huge);
    ASSERT_EQ(::setenv("ACCEL_DISCOVERY_TIMEOUT", huge, 1), 0);
    GatedHooks& hooks = registerGated(name);
    int count = -1;
    std::thread discovering([&] { count = hooks.deviceCount(); });
    hooks.waitUntilEntered();
    // Running, and within its limit: no problem to report.
    EXPECT_EQ(hooks.discoveryProblem(), "");
    hooks.open();
    discovering.join();
    EXPECT_EQ(count, 3);
  }
  ::unsetenv("ACCEL_DISCOVERY_TIMEOUT");
}

}  // namespace
}  // namespace accel
