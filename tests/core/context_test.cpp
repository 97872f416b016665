#include "accel/context.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using ::testing::HasSubstr;
using testing::registerTestBackend;
using testing::TestHooks;

// Runs `fn` on kThreads threads released together, and waits for them.
template <typename Fn>
void runTogether(int threads_count, Fn fn) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < threads_count; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < threads_count) std::this_thread::yield();
      fn(i);
    });
  }
  for (std::thread& t : threads) t.join();
}

// Records the hooks a TestHooks is asked for, from any thread.
class HookLog {
 public:
  explicit HookLog(TestHooks& hooks) : hooks_(hooks) {
    hooks_.setHookObserver([this](std::string_view hook) {
      std::lock_guard<std::mutex> lock(mutex_);
      calls_.emplace_back(hook);
    });
  }
  ~HookLog() { hooks_.setHookObserver({}); }
  int count(std::string_view hook) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(std::count(calls_.begin(), calls_.end(), hook));
  }

 private:
  TestHooks& hooks_;
  mutable std::mutex mutex_;
  std::vector<std::string> calls_;
};

TEST(ContextTest, GlobalContextIsOneObject) {
  EXPECT_EQ(&globalContext(), &globalContext());
}

TEST(ContextTest, LazyInitRunsInitExactlyOnceAcrossEightThreads) {
  TestHooks& hooks = registerTestBackend("ctx_once", 2);
  DeviceType type = hooks.deviceType();
  EXPECT_FALSE(globalContext().isInitialized(type));
  runTogether(8, [&](int) { globalContext().lazyInitDevice(type); });
  EXPECT_EQ(hooks.initCalls(), 1);
  EXPECT_TRUE(globalContext().isInitialized(type));
  globalContext().lazyInitDevice(type);
  EXPECT_EQ(hooks.initCalls(), 1);
}

TEST(ContextTest, LazyInitIsRetriedAfterInitThrew) {
  TestHooks& hooks = registerTestBackend("ctx_retry", 1);
  DeviceType type = hooks.deviceType();
  hooks.failHook(HookId::init, 2);
  EXPECT_THROW(globalContext().lazyInitDevice(type), DeviceError);
  EXPECT_FALSE(globalContext().isInitialized(type));
  EXPECT_THROW(globalContext().lazyInitDevice(type), DeviceError);
  EXPECT_FALSE(globalContext().isInitialized(type));
  globalContext().lazyInitDevice(type);
  EXPECT_TRUE(globalContext().isInitialized(type));
  EXPECT_EQ(hooks.initCalls(), 3);
  globalContext().lazyInitDevice(type);
  EXPECT_EQ(hooks.initCalls(), 3);
}

// Callers that waited while init threw do not inherit the error: the next one
// to get the lock tries again, so exactly one caller sees the failure.
TEST(ContextTest, FailedInitIsRetriedByTheNextConcurrentCaller) {
  TestHooks& hooks = registerTestBackend("ctx_retry_mt", 1);
  DeviceType type = hooks.deviceType();
  hooks.failHook(HookId::init, 1);
  std::atomic<int> failures{0};
  runTogether(8, [&](int) {
    try {
      globalContext().lazyInitDevice(type);
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.message(), HasSubstr("injected failure"));
      failures.fetch_add(1);
    }
  });
  EXPECT_EQ(failures.load(), 1);
  EXPECT_EQ(hooks.initCalls(), 2);
  EXPECT_TRUE(globalContext().isInitialized(type));
}

TEST(ContextTest, LazyInitOfATypeWithoutBackendThrowsNotAvailable) {
  DeviceType type = registerDeviceType("ctx_nobackend");
  try {
    globalContext().lazyInitDevice(type);
    FAIL() << "expected NotAvailable";
  } catch (const NotAvailable& e) {
    EXPECT_THAT(e.message(), HasSubstr(std::string(hookInfo(HookId::init).name) +
                                       "(): no backend is registered for device type "
                                       "'ctx_nobackend'"));
  }
  EXPECT_FALSE(globalContext().isInitialized(type));
}

TEST(ContextTest, IsPinnedPtrIsFalseWithoutAskingAnUninitialisedBackend) {
  TestHooks& hooks = registerTestBackend("ctx_pinned", 1);
  DeviceType type = hooks.deviceType();
  {
    HookLog log(hooks);
    int local = 0;
    EXPECT_FALSE(globalContext().isPinnedPtr(&local, type));
    EXPECT_EQ(log.count(hookInfo(HookId::isPinnedPtr).name), 0);
    EXPECT_FALSE(hooks.isInitialized());
  }
  // An initialising hook's first use initialises the backend, and the
  // context sees it initialised.
  DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(1000);
  EXPECT_TRUE(globalContext().isInitialized(type));
  HookLog log(hooks);
  auto* interior = static_cast<char*>(pinned.get()) + 999;
  EXPECT_TRUE(globalContext().isPinnedPtr(interior, type));
  EXPECT_EQ(log.count(hookInfo(HookId::isPinnedPtr).name), 1);
  int local = 0;
  EXPECT_FALSE(globalContext().isPinnedPtr(&local, type));
  EXPECT_FALSE(globalContext().isPinnedPtr(nullptr, type));
}

TEST(ContextTest, GetPinnedMemoryAllocatorInitialisesTheBackend) {
  TestHooks& hooks = registerTestBackend("ctx_pinned_alloc", 1);
  Allocator& allocator = globalContext().getPinnedMemoryAllocator(hooks.deviceType());
  EXPECT_TRUE(globalContext().isInitialized(hooks.deviceType()));
  EXPECT_EQ(hooks.initCalls(), 1);
  DataPtr data = allocator.allocate(16);
  EXPECT_TRUE(globalContext().isPinnedPtr(data.get(), hooks.deviceType()));
  EXPECT_TRUE(data.device().isCpu()) << data.device();
  EXPECT_EQ(data.device(), allocator.device());
}

TEST(ContextTest, GetDeviceFromPtrInitialisesAndResolvesInteriorPointers) {
  TestHooks& hooks = registerTestBackend("ctx_ptr", 2);
  DeviceType type = hooks.deviceType();
  TestHooks& fresh = registerTestBackend("ctx_ptr_fresh", 1);
  EXPECT_FALSE(globalContext().isInitialized(fresh.deviceType()));
  int stack_value = 0;
  EXPECT_THROW((void)globalContext().getDeviceFromPtr(&stack_value, fresh.deviceType()),
               InvalidArgument);
  EXPECT_TRUE(globalContext().isInitialized(fresh.deviceType()));

  DataPtr data = hooks.getDeviceAllocator(1).allocate(4096);
  auto* end = static_cast<char*>(data.get()) + 4095;
  EXPECT_EQ(globalContext().getDeviceFromPtr(end, type), Device(type, 1));
  EXPECT_TRUE(globalContext().isInitialized(type));
  int local = 0;
  try {
    (void)globalContext().getDeviceFromPtr(&local, type);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("is not memory allocated by 'ctx_ptr'"));
  }
}

TEST(ContextTest, DefaultGeneratorInitialisesAndIsTheBackendsGenerator) {
  TestHooks& hooks = registerTestBackend("ctx_gen", 2);
  DeviceType type = hooks.deviceType();
  Generator g1 = globalContext().defaultGenerator(Device(type, 1));
  EXPECT_TRUE(globalContext().isInitialized(type));
  EXPECT_EQ(g1, hooks.getDefaultGenerator(1));
  EXPECT_EQ(g1.device(), Device(type, 1));
  EXPECT_EQ(globalContext().defaultGenerator(Device(type)), hooks.getDefaultGenerator(0));
  hooks.setCurrentDevice(1);
  EXPECT_EQ(globalContext().defaultGenerator(Device(type)), g1);
  hooks.setCurrentDevice(0);
  EXPECT_THROW((void)globalContext().defaultGenerator(Device(type, 2)), InvalidArgument);
}

TEST(ContextTest, CpuHasOneBuiltInGenerator) {
  Generator cpu = globalContext().defaultGenerator(Device(DeviceType::CPU));
  EXPECT_EQ(cpu, globalContext().defaultGenerator(Device(DeviceType::CPU, 0)));
  EXPECT_EQ(cpu.device(), Device(DeviceType::CPU, 0));
  EXPECT_THROW((void)globalContext().defaultGenerator(Device(DeviceType::CPU, 1)),
               InvalidArgument);
}

TEST(ContextTest, DefaultGeneratorOfATypeWithoutBackendThrowsNotAvailable) {
  EXPECT_THROW((void)globalContext().defaultGenerator(
                   Device(registerDeviceType("ctx_gen_none"), 0)),
               NotAvailable);
}

TEST(ContextTest, ManualSeedReachesEveryDeviceOfEveryInitialisedBackend) {
  TestHooks& a = registerTestBackend("ctx_seed_a", 2);
  TestHooks& b = registerTestBackend("ctx_seed_b", 3);
  TestHooks& idle = registerTestBackend("ctx_seed_idle", 1);
  globalContext().lazyInitDevice(a.deviceType());
  globalContext().lazyInitDevice(b.deviceType());
  // A generator drawn from before seeding must be reset to offset 0.
  a.getDefaultGenerator(1).setOffset(12345);

  globalContext().manualSeed(20240601);

  for (TestHooks* hooks : {&a, &b}) {
    for (int d = 0; d < hooks->deviceCount(); ++d) {
      Generator g = hooks->getDefaultGenerator(static_cast<DeviceIndex>(d));
      EXPECT_EQ(g.currentSeed(), 20240601u) << hooks->name() << ":" << d;
      EXPECT_EQ(g.offset(), 0u) << hooks->name() << ":" << d;
    }
  }
  EXPECT_EQ(globalContext().defaultGenerator(Device(DeviceType::CPU)).currentSeed(),
            20240601u);
  EXPECT_FALSE(globalContext().isInitialized(idle.deviceType()));
  EXPECT_EQ(idle.getDefaultGenerator(0).currentSeed(), kDefaultSeed);
}

// One device whose default generator throws while `failing` is set. Unlike
// the kit (and so TestHooks), it serves getDefaultGenerator from its own impl
// rather than through serveDefaultGeneratorsFrom, so the failure still
// reaches callers once it is initialised.
class FlakyGeneratorHooks final : public AcceleratorHooks {
 public:
  explicit FlakyGeneratorHooks(DeviceType type)
      : AcceleratorHooks(type, Capabilities{}),
        generator_(makePhiloxGenerator(Device(type, 0))) {}
  std::atomic<bool> failing{false};

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void initImpl() override {}
  const Generator& getDefaultGeneratorImpl(DeviceIndex) override {
    if (failing.load()) throw DeviceError("the generator's device failed");
    return generator_;
  }

 private:
  const Generator generator_;
};

TEST(ContextTest, ManualSeedSeedsTheOthersThenRethrowsABackendsError) {
  // `bad` is registered first, so it has the lower id and is seeded first:
  // an implementation that stopped at the first error would leave `good`.
  auto& bad = static_cast<FlakyGeneratorHooks&>(registerHooks(
      std::make_unique<FlakyGeneratorHooks>(registerDeviceType("ctx_seed_bad")),
      "context_test"));
  TestHooks& good = registerTestBackend("ctx_seed_good", 1);
  globalContext().lazyInitDevice(good.deviceType());
  globalContext().lazyInitDevice(bad.deviceType());
  bad.failing = true;
  EXPECT_THROW(globalContext().manualSeed(77), DeviceError);
  bad.failing = false;
  EXPECT_EQ(good.getDefaultGenerator(0).currentSeed(), 77u);
  EXPECT_NO_THROW(globalContext().manualSeed(78));
  EXPECT_EQ(bad.getDefaultGenerator(0).currentSeed(), 78u);
}

// Built-in types come first in a fixed order (cuda, hip, xpu, mps, ...), then
// run-time types by name; unavailable backends are skipped.
TEST(ContextTest, CurrentAcceleratorPrefersTheFixedOrderAndSkipsUnavailable) {
  TestHooks& mps = registerTestBackend("mps", 1);
  TestHooks& xpu = registerTestBackend("xpu", 1);
  Context& context = globalContext();
  context.clearCurrentAccelerator();
  EXPECT_EQ(context.currentAccelerator(), DeviceType::XPU);
  xpu.setAvailable(false);
  EXPECT_EQ(context.currentAccelerator(), DeviceType::MPS);

  // An explicit choice wins, available or not, until cleared.
  context.setCurrentAccelerator(DeviceType::XPU);
  EXPECT_EQ(context.currentAccelerator(), DeviceType::XPU);
  context.clearCurrentAccelerator();
  EXPECT_EQ(context.currentAccelerator(), DeviceType::MPS);

  mps.setAvailable(false);
  std::optional<DeviceType> fallback = context.currentAccelerator();
  if (fallback) {
    EXPECT_GE(toIndex(*fallback), kNumBuiltinDeviceTypes);
    EXPECT_TRUE(getHooks(*fallback).isAvailable());
  }
  mps.setAvailable(true);
  xpu.setAvailable(true);
}

// The order among run-time types, the cache and its invalidation:
// current_accelerator_test.cpp, in a process of its own.

TEST(ContextTest, SetCurrentAcceleratorRejectsCpuAndUnregisteredTypes) {
  EXPECT_THAT(
      [] {
        try {
          globalContext().setCurrentAccelerator(DeviceType::CPU);
        } catch (const InvalidArgument& e) {
          return e.message();
        }
        return std::string();
      }(),
      HasSubstr("cpu is not an accelerator"));
  EXPECT_THROW(globalContext().setCurrentAccelerator(DeviceType::MTIA), InvalidArgument);
  EXPECT_THROW(globalContext().setCurrentAccelerator(registerDeviceType("ctx_acc_none")),
               InvalidArgument);
}

TEST(ContextTest, ContextCallsDefaultToTheCurrentAccelerator) {
  TestHooks& hooks = registerTestBackend("ctx_default_acc", 1);
  globalContext().setCurrentAccelerator(hooks.deviceType());
  Allocator& allocator = globalContext().getPinnedMemoryAllocator();
  EXPECT_TRUE(globalContext().isInitialized(hooks.deviceType()));
  DataPtr data = allocator.allocate(8);
  EXPECT_TRUE(globalContext().isPinnedPtr(data.get()));
  globalContext().clearCurrentAccelerator();
}

}  // namespace
}  // namespace accel
