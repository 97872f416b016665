#include "accel/kit/synchronous_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/philox_generator.h"
#include "support/error_of.h"

namespace accel::kit {
namespace {

using accel::testing::errorOf;
using ::testing::HasSubstr;

// The smallest subclass: everything the kit provides, nothing more.
class KitHooks final : public SynchronousDeviceHooks {
 public:
  KitHooks(DeviceType type, int devices, Capabilities groups = {})
      : SynchronousDeviceHooks(type, groups, devices) {}
  using SynchronousDeviceHooks::addresses;
  using SynchronousDeviceHooks::markDeviceUsed;
  using SynchronousDeviceHooks::setTracing;

  mutable std::vector<HookId> traced;  // single-threaded tests only
  std::optional<HookId> fail_on;

 protected:
  void onHookCall(HookId hook) const override {
    traced.push_back(hook);
    if (hook == fail_on) throw DeviceError("injected");
  }
};

class SynchronousDeviceTest : public ::testing::Test {
 protected:
  KitHooks hooks_{registerDeviceType("kit_sync"), 2};
  DeviceType type_ = hooks_.deviceType();
};

TEST_F(SynchronousDeviceTest, DeclaresStreamsAndEventsBesideTheGivenGroups) {
  EXPECT_TRUE(hooks_.supports(HookGroup::Streams));
  EXPECT_TRUE(hooks_.supports(HookGroup::Events));
  EXPECT_FALSE(hooks_.supports(HookGroup::Device));
  KitHooks none(registerDeviceType("kit_sync_none"), 0);
  EXPECT_FALSE(none.isAvailable());
  EXPECT_TRUE(hooks_.isAvailable());
  EXPECT_TRUE(hooks_.isBuilt());
  EXPECT_EQ(hooks_.deviceCount(), 2);
  EXPECT_THROW(KitHooks(type_, kMaxDevicesPerType + 1), InvalidArgument);
}

TEST_F(SynchronousDeviceTest, CurrentDeviceIsPerObjectAndPerThread) {
  KitHooks other(registerDeviceType("kit_sync_other"), 2);
  hooks_.setCurrentDevice(1);
  EXPECT_EQ(other.getCurrentDevice(), 0);
  EXPECT_EQ(hooks_.exchangeDevice(0), 1);
  hooks_.setCurrentDevice(1);
  std::thread([&] { EXPECT_EQ(hooks_.getCurrentDevice(), 0); }).join();
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(SynchronousDeviceTest, PrimaryContextFollowsUse) {
  EXPECT_FALSE(hooks_.hasPrimaryContext(0));
  hooks_.markDeviceUsed(0);
  EXPECT_TRUE(hooks_.hasPrimaryContext(0));
  EXPECT_FALSE(hooks_.hasPrimaryContext(1));
  (void)hooks_.createEvent(1);
  EXPECT_TRUE(hooks_.hasPrimaryContext(1));
}

TEST_F(SynchronousDeviceTest, DefaultGeneratorsArePhiloxOnePerDevice) {
  Generator g0 = hooks_.getDefaultGenerator(0);
  EXPECT_TRUE(g0 == hooks_.getDefaultGenerator(0));
  EXPECT_FALSE(g0 == hooks_.getDefaultGenerator(1));
  EXPECT_EQ(g0.device(), Device(type_, 0));
  hooks_.setCurrentDevice(1);
  EXPECT_TRUE(hooks_.getDefaultGenerator() == hooks_.getDefaultGenerator(1));
  EXPECT_FALSE(hooks_.getNewGenerator(0) == g0);
}

TEST_F(SynchronousDeviceTest, PointersResolveThroughTheAddressMap) {
  alignas(16) char memory[64];
  hooks_.addresses().insert(memory, 32, Device(type_, 1), MemoryKind::Device);
  hooks_.addresses().insert(memory + 32, 32, Device(DeviceType::CPU), MemoryKind::Pinned);
  EXPECT_EQ(hooks_.getDeviceFromPtr(memory + 31), Device(type_, 1));
  EXPECT_TRUE(hooks_.isPinnedPtr(memory + 40));
  EXPECT_FALSE(hooks_.isPinnedPtr(memory));
  EXPECT_THROW((void)hooks_.getDeviceFromPtr(memory + 40), InvalidArgument);
}

TEST_F(SynchronousDeviceTest, TracingSeesEveryProvidedHookAndMayFailIt) {
  (void)hooks_.getCurrentDevice();  // not traced: tracing is off
  hooks_.init();  // else the first initialising hook runs (and traces) init first
  hooks_.setTracing(true);
  (void)hooks_.getCurrentDevice();
  (void)hooks_.getDefaultStream(1);
  EventId event = hooks_.createEvent(0);
  hooks_.fail_on = HookId::queryEvent;
  EXPECT_THROW((void)hooks_.queryEvent(event), DeviceError);
  hooks_.fail_on = HookId::destroyEvent;
  hooks_.destroyEvent(event);  // never throws, but is seen
  hooks_.setTracing(false);
  (void)hooks_.getCurrentDevice();
  // An initialised backend's index checks use the device count read at init.
  EXPECT_THAT(hooks_.traced,
              ::testing::ElementsAre(HookId::getCurrentDevice, HookId::getDefaultStream,
                                     HookId::createEvent, HookId::queryEvent,
                                     HookId::destroyEvent));
}

// ---- streams ----

TEST_F(SynchronousDeviceTest, NewStreamsHaveDistinctIdsPerDevice) {
  std::set<StreamId> ids;
  for (int i = 0; i < 5; ++i) {
    Stream s = hooks_.getNewStream(0);
    EXPECT_EQ(s.device, Device(type_, 0));
    EXPECT_NE(s.id, kDefaultStreamId);
    ids.insert(s.id);
  }
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(hooks_.getNewStream(1).device, Device(type_, 1));
  EXPECT_TRUE(hooks_.hasPrimaryContext(1));
  EXPECT_EQ(hooks_.streamPriorityRange(), std::make_pair(0, 0));
}

TEST_F(SynchronousDeviceTest, CurrentStreamIsPerThreadAndPerDevice) {
  Stream s0 = hooks_.getNewStream(0);
  EXPECT_EQ(hooks_.getCurrentStream(0), hooks_.getDefaultStream(0));
  hooks_.setCurrentStream(s0);
  EXPECT_EQ(hooks_.getCurrentStream(0), s0);
  EXPECT_EQ(hooks_.getCurrentStream(1), hooks_.getDefaultStream(1));
  std::thread([&] {
    EXPECT_EQ(hooks_.getCurrentStream(0), hooks_.getDefaultStream(0));
  }).join();
  EXPECT_EQ(hooks_.exchangeStream(hooks_.getDefaultStream(0)), s0);
  EXPECT_EQ(hooks_.getCurrentStream(0), hooks_.getDefaultStream(0));
}

TEST_F(SynchronousDeviceTest, UnknownStreamIdsAreRejected) {
  Stream made_on_0 = hooks_.getNewStream(0);
  Stream unknown(Device(type_, 1), made_on_0.id);  // that id exists on device 0 only
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.setCurrentStream(unknown); }),
              HasSubstr("was not created by 'kit_sync'"));
  EXPECT_THROW((void)hooks_.exchangeStream(unknown), InvalidArgument);
  EXPECT_THROW((void)hooks_.queryStream(unknown), InvalidArgument);
  EXPECT_THROW(hooks_.synchronizeStream(unknown), InvalidArgument);
  EXPECT_THROW((void)hooks_.queryStream(Stream(Device(type_, 0), -3)), InvalidArgument);
}

TEST_F(SynchronousDeviceTest, WorkIsSynchronousSoStreamsAreAlwaysIdle) {
  Stream s = hooks_.getNewStream(1);
  EXPECT_TRUE(hooks_.queryStream(s));
  EXPECT_TRUE(hooks_.queryStream(hooks_.getDefaultStream(0)));
  EXPECT_NO_THROW(hooks_.synchronizeStream(s));
  // deviceSynchronize belongs to the device group, declared by the subclass.
  EXPECT_THROW(hooks_.deviceSynchronize(1), NotSupported);
  KitHooks with_device(registerDeviceType("kit_sync_device"), 2, {HookGroup::Device});
  (void)with_device.getNewStream(1);
  EXPECT_NO_THROW(with_device.deviceSynchronize(1));
}

// ---- events ----

TEST_F(SynchronousDeviceTest, InterprocessEventsAreNotSupported) {
  try {
    (void)hooks_.createEvent(0, EventFlags{.interprocess = true});
    FAIL() << "an interprocess event was created";
  } catch (const NotSupported& e) {
    EXPECT_THAT(e.what(), HasSubstr("interprocess"));
    EXPECT_THAT(e.what(), HasSubstr(std::string(hooks_.name())));
  }
}

TEST_F(SynchronousDeviceTest, EventsRecordQueryAndTime) {
  EventId start = hooks_.createEvent(0, EventFlags{.enable_timing = true});
  EventId end = hooks_.createEvent(0, EventFlags{.enable_timing = true});
  EXPECT_NE(start, kNoEvent);
  EXPECT_NE(start, end);
  EXPECT_TRUE(hooks_.queryEvent(start));  // never recorded counts as complete
  hooks_.recordEvent(start, hooks_.getDefaultStream(0));
  hooks_.recordEvent(end, hooks_.getDefaultStream(0));
  EXPECT_TRUE(hooks_.queryEvent(end));
  hooks_.synchronizeEvent(end);
  hooks_.blockStream(end, hooks_.getNewStream(0));
  EXPECT_GE(hooks_.elapsedTime(start, end), 0.0);
  EXPECT_LE(hooks_.elapsedTime(end, start), 0.0);
  hooks_.destroyEvent(start);
  hooks_.destroyEvent(end);
}

TEST_F(SynchronousDeviceTest, ElapsedTimeNeedsTimingEventsThatWereRecorded) {
  EventId plain = hooks_.createEvent(0);
  EventId timed = hooks_.createEvent(0, EventFlags{.enable_timing = true});
  EventId timed_unrecorded = hooks_.createEvent(0, EventFlags{.enable_timing = true});
  hooks_.recordEvent(plain, hooks_.getDefaultStream(0));
  hooks_.recordEvent(timed, hooks_.getDefaultStream(0));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.elapsedTime(plain, timed); }),
              HasSubstr("was created without enable_timing"));
  EXPECT_THAT(
      errorOf<DeviceError>([&] { (void)hooks_.elapsedTime(timed, timed_unrecorded); }),
      HasSubstr("has not been recorded"));
}

TEST_F(SynchronousDeviceTest, UnknownAndDestroyedEventsAreRejected) {
  EventId event = hooks_.createEvent(1);
  hooks_.destroyEvent(event);
  hooks_.destroyEvent(event);   // twice: ignored
  hooks_.destroyEvent(999999);  // unknown: ignored
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.queryEvent(event); }),
              HasSubstr("is not a live event of 'kit_sync'"));
  EXPECT_THROW(hooks_.recordEvent(event, hooks_.getDefaultStream(1)), InvalidArgument);
  EXPECT_THROW(hooks_.synchronizeEvent(event), InvalidArgument);
  EXPECT_THROW(hooks_.blockStream(event, hooks_.getDefaultStream(1)), InvalidArgument);
  EXPECT_THROW((void)hooks_.elapsedTime(event, event), InvalidArgument);
}

TEST_F(SynchronousDeviceTest, EventIsRecordedOnlyOnItsOwnDevice) {
  EventId event = hooks_.createEvent(0);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.recordEvent(event, hooks_.getDefaultStream(1)); }),
              HasSubstr("record an event on its own device"));
  EXPECT_THROW(hooks_.recordEvent(event, Stream(Device(type_, 0), 77)), InvalidArgument);
}

TEST_F(SynchronousDeviceTest, ConcurrentStreamsAndEventsAreSafe) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const auto device = static_cast<DeviceIndex>(t % 2);
      for (int i = 0; i < 200; ++i) {
        Stream s = hooks_.getNewStream(device);
        hooks_.setCurrentStream(s);
        EventId e = hooks_.createEvent(device);
        hooks_.recordEvent(e, hooks_.getCurrentStream(device));
        EXPECT_TRUE(hooks_.queryEvent(e));
        hooks_.destroyEvent(e);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace accel::kit
