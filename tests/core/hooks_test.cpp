#include "accel/hooks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "support/error_of.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;
using testing::registerTestBackend;
using ::testing::StartsWith;
using testing::TestHooks;

// A backend that declares only the groups every backend has (low, high).
class MinimalHooks final : public AcceleratorHooks {
 public:
  explicit MinimalHooks(DeviceType type) : AcceleratorHooks(type, Capabilities{}) {}

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void setCurrentDeviceImpl(DeviceIndex) override {}
};

// Declares the streams group but implements none of it: a backend bug.
class ForgetfulHooks final : public AcceleratorHooks {
 public:
  explicit ForgetfulHooks(DeviceType type)
      : AcceleratorHooks(type, Capabilities{HookGroup::Streams}) {}

 protected:
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void initImpl() override {}
};

// Implements everything it declares except initImpl.
class NoInitHooks final : public AcceleratorHooks {
 public:
  explicit NoInitHooks(DeviceType type) : AcceleratorHooks(type, Capabilities{}) {}

 protected:
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  Generator getNewGeneratorImpl(DeviceIndex) override { return {}; }
};

// Runs a caller-supplied initImpl, counting runs.
class ScriptedInitHooks final : public AcceleratorHooks {
 public:
  ScriptedInitHooks(DeviceType type, std::function<void(ScriptedInitHooks&)> script)
      : AcceleratorHooks(type, Capabilities{}), script_(std::move(script)) {}
  int runs() const { return runs_.load(); }

 protected:
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void initImpl() override {
    runs_.fetch_add(1);
    script_(*this);
  }
  const Generator& getDefaultGeneratorImpl(DeviceIndex) override { return undefined_; }

 private:
  std::function<void(ScriptedInitHooks&)> script_;
  std::atomic<int> runs_{0};
  const Generator undefined_;
};

// Reports a device count outside what the core allows, or throws.
class MiscountingHooks final : public AcceleratorHooks {
 public:
  MiscountingHooks(DeviceType type, int count)
      : AcceleratorHooks(type, {}), count_(count) {}

 protected:
  int deviceCountImpl() const override {
    if (count_ == 0) throw DeviceError("driver missing");
    return count_;
  }

 private:
  int count_;
};

// Runs `fn` on a new thread and waits for it.
void onOtherThread(const std::function<void()>& fn) { std::thread(fn).join(); }

class HooksContractTest : public ::testing::Test {
 protected:
  TestHooks& hooks_ = registerTestBackend("testdev", 2);
  void TearDown() override {
    hooks_.clearHookFailures();
    hooks_.setCurrentDevice(0);
  }
};

TEST_F(HooksContractTest, ProbesAreNoexcept) {
  static_assert(noexcept(hooks_.isBuilt()));
  static_assert(noexcept(hooks_.isAvailable()));
  static_assert(noexcept(hooks_.deviceCount()));
  static_assert(noexcept(hooks_.hasPrimaryContext(0)));
  static_assert(noexcept(hooks_.isPinnedPtr(nullptr)));
  static_assert(noexcept(hooks_.destroyEvent(0)));
  EXPECT_TRUE(hooks_.isBuilt());
  EXPECT_TRUE(hooks_.isAvailable());
  EXPECT_EQ(hooks_.deviceCount(), 2);
}

TEST_F(HooksContractTest, ProbesWhoseImplementationThrowsAnswerTheirDefault) {
  for (const HookInfo& hook : kHookCatalogue) {
    if (hook.probe) hooks_.failHook(hook.name);
  }
  DataPtr pinned = hooks_.getPinnedMemoryAllocator().allocate(64);
  EXPECT_FALSE(hooks_.isBuilt());
  EXPECT_FALSE(hooks_.isAvailable());
  EXPECT_EQ(hooks_.deviceCount(), 0);
  EXPECT_FALSE(hooks_.hasPrimaryContext(0));
  EXPECT_FALSE(hooks_.isPinnedPtr(pinned.get()));
  hooks_.clearHookFailures();
  EXPECT_TRUE(hooks_.isPinnedPtr(pinned.get()));
  EXPECT_EQ(hooks_.deviceCount(), 2);
}

TEST_F(HooksContractTest, DeviceCountIsClampedToTheValidRange) {
  EXPECT_EQ(MiscountingHooks(registerDeviceType("hooks_many"), 1000).deviceCount(),
            kMaxDevicesPerType);
  EXPECT_EQ(MiscountingHooks(registerDeviceType("hooks_negative"), -3).deviceCount(), 0);
  EXPECT_EQ(MiscountingHooks(registerDeviceType("hooks_throwing"), 0).deviceCount(), 0);
}

TEST_F(HooksContractTest, CurrentDeviceIsZeroUntilSetAndPerThread) {
  onOtherThread([&] { EXPECT_EQ(hooks_.getCurrentDevice(), 0); });
  hooks_.setCurrentDevice(1);
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  onOtherThread([&] {
    EXPECT_EQ(hooks_.getCurrentDevice(), 0);
    hooks_.setCurrentDevice(1);
    hooks_.setCurrentDevice(0);
  });
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(HooksContractTest, ExchangeDeviceSetsAndReturnsThePrevious) {
  EXPECT_EQ(hooks_.exchangeDevice(1), 0);
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  EXPECT_EQ(hooks_.exchangeDevice(1), 1);
  EXPECT_EQ(hooks_.exchangeDevice(0), 1);
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(HooksContractTest, IndexErrorsReadExactlyAlike) {
  const std::string expected = "device index 5 out of range [0, 2) for 'testdev'";
  int local = 0;
  (void)local;
  const std::vector<std::pair<HookId, std::function<void()>>> calls = {
      {HookId::setCurrentDevice, [&] { hooks_.setCurrentDevice(5); }},
      {HookId::exchangeDevice, [&] { (void)hooks_.exchangeDevice(5); }},
      {HookId::getDefaultGenerator, [&] { (void)hooks_.getDefaultGenerator(5); }},
      {HookId::getNewGenerator, [&] { (void)hooks_.getNewGenerator(5); }},
      {HookId::getDeviceAllocator, [&] { (void)hooks_.getDeviceAllocator(5); }},
      {HookId::deviceSynchronize, [&] { hooks_.deviceSynchronize(5); }},
      {HookId::getDeviceProperties, [&] { (void)hooks_.getDeviceProperties(5); }},
      {HookId::getCurrentStream, [&] { (void)hooks_.getCurrentStream(5); }},
      {HookId::getDefaultStream, [&] { (void)hooks_.getDefaultStream(5); }},
      {HookId::getNewStream, [&] { (void)hooks_.getNewStream(5); }},
      {HookId::createEvent, [&] { (void)hooks_.createEvent(5); }},
      {HookId::memoryStats, [&] { (void)hooks_.memoryStats(5); }},
      {HookId::resetPeakMemoryStats, [&] { hooks_.resetPeakMemoryStats(5); }},
      {HookId::getMemoryInfo, [&] { (void)hooks_.getMemoryInfo(5); }},
      {HookId::resetAccumulatedMemoryStats,
       [&] { hooks_.resetAccumulatedMemoryStats(5); }},
      {HookId::setMemoryFraction, [&] { hooks_.setMemoryFraction(0.5, 5); }},
      {HookId::memorySnapshot, [&] { (void)hooks_.memorySnapshot({.device = 5}); }},
  };
  for (const auto& [hook, call] : calls) {
    const std::string_view name = hookInfo(hook).name;
    SCOPED_TRACE(name);
    std::string message = errorOf<InvalidArgument>(call);
    EXPECT_THAT(message, StartsWith(expected));
    EXPECT_THAT(message, HasSubstr(" (" + std::string(name) + ")"));
    EXPECT_THAT(message, HasSubstr("use an index from 0 to 1"));
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(HooksContractTest, NegativeAndBoundaryIndicesAreRejected) {
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.setCurrentDevice(-1); }),
              StartsWith("device index -1 out of range [0, 2) for 'testdev'"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.setCurrentDevice(2); }),
              StartsWith("device index 2 out of range [0, 2) for 'testdev'"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.setCurrentDevice(-128); }),
              StartsWith("device index -128 out of range"));
  EXPECT_NO_THROW(hooks_.checkDeviceIndex(1));
  EXPECT_EQ(hooks_.resolveDeviceIndex(-1), 0);
}

TEST_F(HooksContractTest, BackendWithoutDevicesSaysSo) {
  TestHooks empty(registerDeviceType("hooks_empty"), 0);
  EXPECT_FALSE(empty.isAvailable());
  EXPECT_THAT(errorOf<InvalidArgument>([&] { empty.setCurrentDevice(0); }),
              HasSubstr("the backend reports no devices"));
}

TEST_F(HooksContractTest, MaybeExchangeDeviceIgnoresMinusOneAndInvalidIndices) {
  hooks_.setCurrentDevice(1);
  EXPECT_EQ(hooks_.maybeExchangeDevice(-1), 1);
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  EXPECT_EQ(hooks_.maybeExchangeDevice(5), 1);
  EXPECT_EQ(hooks_.maybeExchangeDevice(-7), 1);
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  EXPECT_EQ(hooks_.maybeExchangeDevice(0), 1);
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(HooksContractTest, MinusOneMeansTheCurrentDevice) {
  hooks_.setCurrentDevice(1);
  EXPECT_EQ(hooks_.getDefaultGenerator(-1), hooks_.getDefaultGenerator(1));
  EXPECT_EQ(hooks_.getCurrentStream(-1).device, Device(hooks_.deviceType(), 1));
  EXPECT_EQ(hooks_.getDeviceAllocator(-1).device(), Device(hooks_.deviceType(), 1));
  EXPECT_EQ(hooks_.getNewGenerator().device(), Device(hooks_.deviceType(), 1));
}

TEST_F(HooksContractTest, DefaultGeneratorIsOnePerDeviceAndNewOnesAreIndependent) {
  Generator g0 = hooks_.getDefaultGenerator(0);
  EXPECT_EQ(g0, hooks_.getDefaultGenerator(0));
  EXPECT_NE(g0, hooks_.getDefaultGenerator(1));
  Generator fresh = hooks_.getNewGenerator(0);
  EXPECT_NE(fresh, g0);
  fresh.manualSeed(99);
  g0.manualSeed(7);
  EXPECT_EQ(fresh.currentSeed(), 99u);
  EXPECT_EQ(hooks_.getDefaultGenerator(0).currentSeed(), 7u);
}

TEST_F(HooksContractTest, StreamsOfAnotherTypeOrBadIndexAreRejected) {
  Stream foreign(Device(DeviceType::CUDA, 0), 0);
  std::string message =
      errorOf<InvalidArgument>([&] { hooks_.setCurrentStream(foreign); });
  EXPECT_THAT(message, HasSubstr(std::string(hookInfo(HookId::setCurrentStream).name) +
                                 "(): stream 0 on cuda:0 belongs to 'cuda', "
                                 "not 'testdev'"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.queryStream(foreign); }),
              HasSubstr(std::string(hookInfo(HookId::queryStream).name) + "()"));
  Stream bad_index(Device(hooks_.deviceType(), 9), 0);
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.synchronizeStream(bad_index); }),
              StartsWith("device index 9 out of range [0, 2) for 'testdev'"));
  EXPECT_THROW(hooks_.recordEvent(1, foreign), InvalidArgument);
  EXPECT_THROW(hooks_.blockStream(1, foreign), InvalidArgument);
  EXPECT_THROW((void)hooks_.exchangeStream(foreign), InvalidArgument);
}

TEST_F(HooksContractTest, StreamPriorityOutsideTheRangeIsRejected) {
  auto [lowest, greatest] = hooks_.streamPriorityRange();
  EXPECT_NO_THROW((void)hooks_.getNewStream(0, lowest));
  EXPECT_NO_THROW((void)hooks_.getNewStream(0, greatest));
  EXPECT_THAT(
      errorOf<InvalidArgument>([&] { (void)hooks_.getNewStream(0, greatest + 1); }),
      HasSubstr("is outside 'testdev''s range"));
}

TEST_F(HooksContractTest, NullPointerAndEmptyObserverAreRejected) {
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.getDeviceFromPtr(nullptr); }),
              HasSubstr("null pointer"));
  EXPECT_FALSE(hooks_.isPinnedPtr(nullptr));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.attachOutOfMemoryObserver({}); }),
              HasSubstr("the observer passed to 'testdev' is empty"));
}

TEST_F(HooksContractTest, TestBackendDeclaresEveryGroup) {
  for (int g = 0; g < kNumHookGroups; ++g) {
    EXPECT_TRUE(hooks_.supports(static_cast<HookGroup>(g))) << g;
  }
  EXPECT_EQ(
      hooks_.capabilities().str(),
      "low, high, device, streams, events, memory, memory_history, graphs, copies, fill");
  EXPECT_EQ(hooks_.name(), "testdev");
}

TEST(HooksGroupsTest, UndeclaredGroupFailsWithNotSupportedNamingBackendAndGroup) {
  MinimalHooks hooks(registerDeviceType("minimaldev"));
  EXPECT_TRUE(hooks.supports(HookGroup::Low));
  EXPECT_TRUE(hooks.supports(HookGroup::High));
  const Stream stream(Device(hooks.deviceType(), 0), 0);
  const std::vector<std::pair<HookId, std::function<void()>>> calls = {
      {HookId::deviceSynchronize, [&] { hooks.deviceSynchronize(0); }},
      {HookId::showConfig, [&] { (void)hooks.showConfig(); }},
      {HookId::getDeviceProperties, [&] { (void)hooks.getDeviceProperties(0); }},
      {HookId::getCurrentStream, [&] { (void)hooks.getCurrentStream(0); }},
      {HookId::getNewStream, [&] { (void)hooks.getNewStream(0); }},
      {HookId::setCurrentStream, [&] { hooks.setCurrentStream(stream); }},
      {HookId::synchronizeStream, [&] { hooks.synchronizeStream(stream); }},
      {HookId::createEvent, [&] { (void)hooks.createEvent(0); }},
      {HookId::recordEvent, [&] { hooks.recordEvent(1, stream); }},
      {HookId::elapsedTime, [&] { (void)hooks.elapsedTime(1, 2); }},
      {HookId::memoryStats, [&] { (void)hooks.memoryStats(0); }},
      {HookId::emptyCache, [&] { hooks.emptyCache(); }},
      {HookId::recordMemoryHistory, [&] { hooks.recordMemoryHistory({}); }},
      {HookId::memorySnapshot, [&] { (void)hooks.memorySnapshot(); }},
      {HookId::graphCreate, [&] { (void)hooks.graphCreate(); }},
      {HookId::graphReplay, [&] { hooks.graphReplay(1); }},
      {HookId::graphPool, [&] { (void)hooks.graphPool(1); }},
  };
  for (const auto& [hook, call] : calls) {
    const HookInfo& info = hookInfo(hook);
    SCOPED_TRACE(info.name);
    std::string message = errorOf<NotSupported>(call);
    EXPECT_THAT(message, StartsWith("'minimaldev' does not support " +
                                    std::string(info.name) + "()"));
    EXPECT_THAT(message, HasSubstr("does not declare the '" +
                                   std::string(hookGroupName(info.group)) + "' group"));
    EXPECT_THAT(message, HasSubstr("it declares: low, high"));
  }
  EXPECT_FALSE(hooks.isInitialized()) << "a refused call must not initialise";
  hooks.destroyEvent(1);  // never throws, even without the events group
}

TEST(HooksGroupsTest, UnimplementedHookOfADeclaredGroupNamesTheImplToOverride) {
  ForgetfulHooks hooks(registerDeviceType("forgetfuldev"));
  const HookInfo& hook = hookInfo(HookId::getCurrentStream);
  std::string message = errorOf<NotSupported>([&] { (void)hooks.getCurrentStream(0); });
  EXPECT_THAT(message,
              StartsWith("'forgetfuldev' does not implement " + std::string(hook.name) +
                         "() although it declares the 'streams' group"));
  EXPECT_THAT(message, HasSubstr("must override " + std::string(hook.impl)));
  EXPECT_THAT(message, HasSubstr("accel check --backend forgetfuldev"));
  try {
    (void)hooks.getNewStream(0);
    ADD_FAILURE() << "expected HookNotImplemented";
  } catch (const HookNotImplemented& e) {
    EXPECT_EQ(e.hook(), HookId::getNewStream) << "the error carries the hook";
  }
}

TEST(HooksGroupsTest, AMissingInitImplSurfacesOnTheFirstInitialisingHook) {
  NoInitHooks hooks(registerDeviceType("noinitdev"));
  const std::string expected =
      "'noinitdev' does not implement " + std::string(hookInfo(HookId::init).name) + "()";
  EXPECT_THAT(errorOf<NotSupported>([&] { (void)hooks.getNewGenerator(0); }),
              StartsWith(expected));
  EXPECT_THAT(errorOf<NotSupported>([&] { hooks.init(); }), StartsWith(expected));
  EXPECT_FALSE(hooks.isInitialized());
  EXPECT_EQ(hooks.getCurrentDevice(), 0) << "the low group never initialises";
}

// ---- lazy initialisation in the base (hooks.h) ----

TEST(HooksInitTest, InitRunsInitImplOncePerObject) {
  TestHooks hooks(registerDeviceType("init_once"), 2);
  EXPECT_FALSE(hooks.isInitialized());
  EXPECT_FALSE(hooks.initializationStarted());
  hooks.init();
  hooks.init();
  EXPECT_TRUE(hooks.isInitialized());
  EXPECT_TRUE(hooks.initializationStarted());
  EXPECT_EQ(hooks.initCalls(), 1);
}

TEST(HooksInitTest, InitThatThrowsLeavesTheObjectUninitialisedAndIsRetried) {
  TestHooks hooks(registerDeviceType("init_retry"), 2);
  hooks.failHook(HookId::init, 1);
  EXPECT_THROW(hooks.init(), DeviceError);
  EXPECT_FALSE(hooks.isInitialized());
  EXPECT_FALSE(hooks.initializationStarted()) << "started is false again after a throw";
  hooks.init();
  EXPECT_TRUE(hooks.isInitialized());
  EXPECT_EQ(hooks.initCalls(), 2);
}

TEST(HooksInitTest, ConcurrentCallersWaitForTheOneRunningInit) {
  std::atomic<bool> finished{false};
  ScriptedInitHooks hooks(registerDeviceType("init_concurrent"), [&](auto&) {
    // Give the other callers time to arrive while this runs; correctness
    // does not depend on it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.store(true);
  });
  std::atomic<int> saw_unfinished{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      hooks.init();
      if (!finished.load()) saw_unfinished.fetch_add(1);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(hooks.runs(), 1);
  EXPECT_EQ(saw_unfinished.load(), 0) << "a caller returned before initImpl finished";
  EXPECT_TRUE(hooks.isInitialized());
}

TEST(HooksInitTest, AfterAThrowTheNextCallerAWaitingOneIncludedRunsInitAgain) {
  ScriptedInitHooks hooks(registerDeviceType("init_retry_concurrent"), [](auto& self) {
    if (self.runs() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let others queue
      throw DeviceError("first init fails");
    }
  });
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      try {
        hooks.init();
      } catch (const DeviceError&) {
        failures.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 1) << "only the caller that ran the failed init sees it";
  EXPECT_EQ(hooks.runs(), 2);
  EXPECT_TRUE(hooks.isInitialized());
}

TEST(HooksInitTest, InitializationStartedIsTrueWhileInitImplRuns) {
  bool started_inside = false;
  bool initialized_inside = true;
  ScriptedInitHooks hooks(registerDeviceType("init_started"), [&](auto& self) {
    started_inside = self.initializationStarted();
    initialized_inside = self.isInitialized();
  });
  hooks.init();
  EXPECT_TRUE(started_inside);
  EXPECT_FALSE(initialized_inside);
}

TEST(HooksInitTest, ReenteringFromTheBackendsOwnInitImplIsAnInvalidArgument) {
  std::string from_init;
  std::string from_hook;
  ScriptedInitHooks hooks(registerDeviceType("init_reentry"), [&](auto& self) {
    from_init = errorOf<InvalidArgument>([&] { self.init(); });
    from_hook = errorOf<InvalidArgument>([&] { (void)self.getDefaultGenerator(0); });
  });
  hooks.init();  // the inner calls failed; initImpl itself returned normally
  EXPECT_THAT(from_init, HasSubstr("from inside its own initImpl"));
  EXPECT_THAT(from_hook,
              StartsWith(std::string(hookInfo(HookId::getDefaultGenerator).name) + "()"));
  EXPECT_THAT(from_hook, HasSubstr("from inside its own initImpl"));
  EXPECT_TRUE(hooks.isInitialized());
  EXPECT_EQ(hooks.runs(), 1);
}

TEST(HooksInitTest, EveryInitialisingGroupInitialisesOnFirstUse) {
  int local = 0;
  const std::vector<std::pair<HookId, std::function<void(TestHooks&)>>> calls = {
      {HookId::getDefaultGenerator, [](TestHooks& h) { (void)h.getDefaultGenerator(0); }},
      {HookId::getDeviceFromPtr,
       [&](TestHooks& h) {
         EXPECT_THROW((void)h.getDeviceFromPtr(&local), InvalidArgument);
       }},
      {HookId::getPinnedMemoryAllocator,
       [](TestHooks& h) { (void)h.getPinnedMemoryAllocator(); }},
      {HookId::deviceSynchronize, [](TestHooks& h) { h.deviceSynchronize(0); }},
      {HookId::getCurrentStream, [](TestHooks& h) { (void)h.getCurrentStream(0); }},
      {HookId::streamPriorityRange, [](TestHooks& h) { (void)h.streamPriorityRange(); }},
      {HookId::createEvent, [](TestHooks& h) { h.destroyEvent(h.createEvent(0)); }},
      {HookId::memoryStats, [](TestHooks& h) { (void)h.memoryStats(0); }},
      {HookId::recordMemoryHistory, [](TestHooks& h) { h.recordMemoryHistory({}); }},
      {HookId::graphCreate, [](TestHooks& h) { h.graphDestroy(h.graphCreate()); }},
  };
  for (const auto& [hook, call] : calls) {
    const HookInfo& info = hookInfo(hook);
    SCOPED_TRACE(info.name);
    ASSERT_TRUE(initialisesOnFirstUse(info));
    TestHooks hooks(registerDeviceType("init_first_use"), 2);
    call(hooks);
    EXPECT_TRUE(hooks.isInitialized());
    EXPECT_EQ(hooks.initCalls(), 1);
  }
}

TEST(HooksInitTest, ProbesAndCurrentDeviceHooksNeverInitialise) {
  TestHooks hooks(registerDeviceType("init_never"), 2);
  int local = 0;
  (void)hooks.isBuilt();
  (void)hooks.isAvailable();
  (void)hooks.deviceCount();
  (void)hooks.hasPrimaryContext(0);
  (void)hooks.isPinnedPtr(&local);
  hooks.setCurrentDevice(1);
  (void)hooks.exchangeDevice(0);
  (void)hooks.maybeExchangeDevice(1);
  (void)hooks.getCurrentDevice();
  hooks.destroyEvent(1);
  EXPECT_EQ(hooks.initCalls(), 0);
  EXPECT_FALSE(hooks.isInitialized());
}

TEST(HooksInitTest, AFailedInitOnFirstUseFailsTheHookAndTheNextUseRetries) {
  TestHooks hooks(registerDeviceType("init_first_use_retry"), 2);
  hooks.failHook(HookId::init, 1);
  EXPECT_THROW((void)hooks.getDefaultGenerator(0), DeviceError);
  EXPECT_FALSE(hooks.isInitialized());
  EXPECT_NO_THROW((void)hooks.getDefaultGenerator(0));
  EXPECT_EQ(hooks.initCalls(), 2);
}

TEST(HooksInitTest, TheAbsentHooksRefuseToInitialiseNamingTheHookCalled) {
  AcceleratorHooks& absent = getHooks(registerDeviceType("init_absent"));
  for (HookId hook : {HookId::getPinnedMemoryAllocator, HookId::init}) {
    const std::string name(hookInfo(hook).name);
    SCOPED_TRACE(name);
    std::string message = errorOf<NotAvailable>([&] {
      if (hook == HookId::init) {
        absent.init();
      } else {
        (void)absent.getPinnedMemoryAllocator();
      }
    });
    EXPECT_THAT(message, StartsWith(name + "(): no backend is registered"));
  }
  EXPECT_FALSE(absent.isInitialized());
  EXPECT_FALSE(absent.initializationStarted());
}

TEST(CapabilitiesTest, LowAndHighAreAlwaysPresent) {
  Capabilities none;
  EXPECT_TRUE(none.has(HookGroup::Low));
  EXPECT_TRUE(none.has(HookGroup::High));
  EXPECT_FALSE(none.has(HookGroup::Streams));
  EXPECT_EQ(none.str(), "low, high");
  Capabilities streams = none.with(HookGroup::Streams);
  EXPECT_TRUE(streams.has(HookGroup::Streams));
  EXPECT_FALSE(none.has(HookGroup::Streams));  // with() returns a copy
  EXPECT_EQ(streams, (Capabilities{HookGroup::Streams}));
  EXPECT_NE(streams, none);
}

TEST(CapabilitiesTest, GroupNamesAreSpelledOut) {
  const char* names[] = {"low",    "high",           "device", "streams", "events",
                         "memory", "memory_history", "graphs", "copies",  "fill"};
  static_assert(std::size(names) == kNumHookGroups, "a name for every group");
  for (int g = 0; g < kNumHookGroups; ++g) {
    EXPECT_EQ(hookGroupName(static_cast<HookGroup>(g)), names[g]);
  }
  EXPECT_EQ(hookGroupName(static_cast<HookGroup>(99)), "unknown");
}

}  // namespace
}  // namespace accel
