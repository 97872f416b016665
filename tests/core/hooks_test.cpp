#include "accel/hooks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "support/test_backend.h"

namespace accel {
namespace {

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

template <typename Error, typename Call>
std::string errorOf(Call&& call) {
  try {
    call();
    ADD_FAILURE() << "expected an exception";
  } catch (const Error& e) {
    return e.message();
  }
  return {};
}

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
  for (const char* probe :
       {"isBuilt", "isAvailable", "deviceCount", "hasPrimaryContext", "isPinnedPtr"}) {
    hooks_.failHook(probe);
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
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"setCurrentDevice", [&] { hooks_.setCurrentDevice(5); }},
      {"exchangeDevice", [&] { (void)hooks_.exchangeDevice(5); }},
      {"getDefaultGenerator", [&] { (void)hooks_.getDefaultGenerator(5); }},
      {"getNewGenerator", [&] { (void)hooks_.getNewGenerator(5); }},
      {"getDeviceAllocator", [&] { (void)hooks_.getDeviceAllocator(5); }},
      {"deviceSynchronize", [&] { hooks_.deviceSynchronize(5); }},
      {"getDeviceProperties", [&] { (void)hooks_.getDeviceProperties(5); }},
      {"getCurrentStream", [&] { (void)hooks_.getCurrentStream(5); }},
      {"getDefaultStream", [&] { (void)hooks_.getDefaultStream(5); }},
      {"getNewStream", [&] { (void)hooks_.getNewStream(5); }},
      {"createEvent", [&] { (void)hooks_.createEvent(5); }},
      {"memoryStats", [&] { (void)hooks_.memoryStats(5); }},
      {"resetPeakMemoryStats", [&] { hooks_.resetPeakMemoryStats(5); }},
      {"memorySnapshot", [&] { (void)hooks_.memorySnapshot({.device = 5}); }},
  };
  for (const auto& [hook, call] : calls) {
    SCOPED_TRACE(hook);
    std::string message = errorOf<InvalidArgument>(call);
    EXPECT_THAT(message, StartsWith(expected));
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
  EXPECT_THAT(message,
              HasSubstr("setCurrentStream(): stream 0 on cuda:0 belongs to 'cuda', "
                        "not 'testdev'"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.queryStream(foreign); }),
              HasSubstr("queryStream()"));
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
  EXPECT_EQ(hooks_.capabilities().str(),
            "low, high, device, streams, events, memory, memory_history, graphs");
  EXPECT_EQ(hooks_.name(), "testdev");
}

TEST(HooksGroupsTest, UndeclaredGroupFailsWithNotSupportedNamingBackendAndGroup) {
  MinimalHooks hooks(registerDeviceType("minimaldev"));
  EXPECT_TRUE(hooks.supports(HookGroup::Low));
  EXPECT_TRUE(hooks.supports(HookGroup::High));
  const Stream stream(Device(hooks.deviceType(), 0), 0);
  const std::vector<std::tuple<std::string, std::string, std::function<void()>>> calls = {
      {"deviceSynchronize", "device", [&] { hooks.deviceSynchronize(0); }},
      {"showConfig", "device", [&] { (void)hooks.showConfig(); }},
      {"getDeviceProperties", "device", [&] { (void)hooks.getDeviceProperties(0); }},
      {"getCurrentStream", "streams", [&] { (void)hooks.getCurrentStream(0); }},
      {"getNewStream", "streams", [&] { (void)hooks.getNewStream(0); }},
      {"setCurrentStream", "streams", [&] { hooks.setCurrentStream(stream); }},
      {"synchronizeStream", "streams", [&] { hooks.synchronizeStream(stream); }},
      {"createEvent", "events", [&] { (void)hooks.createEvent(0); }},
      {"recordEvent", "events", [&] { hooks.recordEvent(1, stream); }},
      {"elapsedTime", "events", [&] { (void)hooks.elapsedTime(1, 2); }},
      {"memoryStats", "memory", [&] { (void)hooks.memoryStats(0); }},
      {"emptyCache", "memory", [&] { hooks.emptyCache(); }},
      {"recordMemoryHistory", "memory_history", [&] { hooks.recordMemoryHistory({}); }},
      {"memorySnapshot", "memory_history", [&] { (void)hooks.memorySnapshot(); }},
      {"graphCreate", "graphs", [&] { (void)hooks.graphCreate(); }},
      {"graphReplay", "graphs", [&] { hooks.graphReplay(1); }},
      {"graphPool", "graphs", [&] { (void)hooks.graphPool(1); }},
  };
  for (const auto& [hook, group, call] : calls) {
    SCOPED_TRACE(hook);
    std::string message = errorOf<NotSupported>(call);
    EXPECT_THAT(message, StartsWith("'minimaldev' does not support " + hook + "()"));
    EXPECT_THAT(message, HasSubstr("does not declare the '" + group + "' group"));
    EXPECT_THAT(message, HasSubstr("it declares: low, high"));
  }
  hooks.destroyEvent(1);  // never throws, even without the events group
}

TEST(HooksGroupsTest, UnimplementedHookOfADeclaredGroupIsReportedAsABackendBug) {
  ForgetfulHooks hooks(registerDeviceType("forgetfuldev"));
  std::string message = errorOf<NotSupported>([&] { (void)hooks.getCurrentStream(0); });
  EXPECT_THAT(message, StartsWith("'forgetfuldev' does not implement getCurrentStream() "
                                  "although it declares the 'streams' group"));
  EXPECT_THAT(message, HasSubstr("accel check --backend forgetfuldev"));
  // A high-group hook a backend forgot is reported the same way.
  EXPECT_THAT(errorOf<NotSupported>([&] { hooks.init(); }),
              StartsWith("'forgetfuldev' does not implement init()"));
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
  const char* names[] = {"low",    "high",   "device",         "streams",
                         "events", "memory", "memory_history", "graphs"};
  for (int g = 0; g < kNumHookGroups; ++g) {
    EXPECT_EQ(hookGroupName(static_cast<HookGroup>(g)), names[g]);
  }
  EXPECT_EQ(hookGroupName(static_cast<HookGroup>(99)), "unknown");
}

}  // namespace
}  // namespace accel
