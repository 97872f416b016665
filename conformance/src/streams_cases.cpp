// The streams group: default, current (per thread and device), new, exchange,
// query and synchronize.
#include <climits>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace {

void defaultStreamIsStreamZeroOfItsDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(hooks.getDefaultStream(DeviceIndex(i)),
              Stream(deviceOf(hooks, i), kDefaultStreamId))
        << "getDefaultStream(" << i << ")";
  }
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(hooks.getDefaultStream(), hooks.getDefaultStream(last))
        << "getDefaultStream(-1) after setCurrentDevice(" << int(last) << ")";
  });
}

void currentStreamIsDefaultUntilSet(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  inNewThread([&] {
    for (int i = 0; i < count; ++i) {
      EXPECT_EQ(hooks.getCurrentStream(DeviceIndex(i)),
                hooks.getDefaultStream(DeviceIndex(i)))
          << "getCurrentStream(" << i << ") on a new thread";
    }
  });
}

void currentStreamIsPerThreadAndPerDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  inNewThread([&] {
    Stream mine = hooks.getNewStream(0);
    hooks.setCurrentStream(mine);
    EXPECT_EQ(hooks.getCurrentStream(0), mine)
        << "getCurrentStream(0) after setCurrentStream";
    EXPECT_EQ(hooks.getCurrentStream(), mine)
        << "getCurrentStream(-1) with device 0 current, after setCurrentStream";
    if (count >= 2) {
      EXPECT_EQ(hooks.getCurrentStream(1), hooks.getDefaultStream(1))
          << "getCurrentStream(1) after setCurrentStream(a stream of device 0): the "
             "current "
             "stream must be per device";
    }
    inNewThread([&] {
      EXPECT_EQ(hooks.getCurrentStream(0), hooks.getDefaultStream(0))
          << "getCurrentStream(0) on a thread started after another thread called "
             "setCurrentStream: the current stream must be per thread";
      hooks.setCurrentStream(hooks.getNewStream(0));
    });
    EXPECT_EQ(hooks.getCurrentStream(0), mine)
        << "getCurrentStream(0) after another thread called setCurrentStream: the "
           "current "
           "stream must be per thread";
  });
}

void newStreamsHonourPriorityRange(AcceleratorHooks& hooks) {
  auto [lowest, greatest] = hooks.streamPriorityRange();
  EXPECT_LE(lowest, 0)
      << "streamPriorityRange(): 0, the default priority, must be in range";
  EXPECT_GE(greatest, 0)
      << "streamPriorityRange(): 0, the default priority, must be in range";
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    for (int priority : {lowest, 0, greatest}) {
      Stream stream = hooks.getNewStream(DeviceIndex(i), priority);
      EXPECT_EQ(stream.device, deviceOf(hooks, i))
          << "getNewStream(" << i << ", " << priority << ").device";
      EXPECT_NE(stream.id, kDefaultStreamId)
          << "getNewStream(" << i << ", " << priority << ") returned the default stream";
    }
  }
  if (greatest < INT_MAX) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { (void)hooks.getNewStream(0, greatest + 1); }, {"priority"}))
        << "getNewStream(0, " << greatest + 1 << "), above the range";
  }
  if (lowest > INT_MIN) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { (void)hooks.getNewStream(0, lowest - 1); }, {"priority"}))
        << "getNewStream(0, " << lowest - 1 << "), below the range";
  }
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getNewStream(DeviceIndex(count)); },
      {rangeMessage(hooks, count)}))
      << "getNewStream(" << count << ")";
}

void exchangeStreamReturnsPreviousStream(AcceleratorHooks& hooks) {
  inNewThread([&] {
    Stream fresh = hooks.getNewStream(0);
    Stream previous = hooks.exchangeStream(fresh);
    EXPECT_EQ(previous, hooks.getDefaultStream(0))
        << "exchangeStream() on a new thread returns the default stream";
    EXPECT_EQ(hooks.getCurrentStream(0), fresh)
        << "getCurrentStream(0) after exchangeStream";
    EXPECT_EQ(hooks.exchangeStream(previous), fresh) << "exchangeStream(back)";
    EXPECT_EQ(hooks.getCurrentStream(0), previous)
        << "getCurrentStream(0) after exchanging back";
  });
}

void streamArgumentsAreValidated(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  Stream foreign(Device(DeviceType::CPU, 0), kDefaultStreamId);
  EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { hooks.setCurrentStream(foreign); },
                                                {"cpu"}))
      << "setCurrentStream(a cpu stream)";
  EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { (void)hooks.queryStream(foreign); },
                                                {"cpu"}))
      << "queryStream(a cpu stream)";
  if (count < kMaxDevicesPerType) {
    Stream beyond(deviceOf(hooks, count), kDefaultStreamId);
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.synchronizeStream(beyond); }, {rangeMessage(hooks, count)}))
        << "synchronizeStream(a stream of device " << count << ")";
  }
}

void queryIsTrueAfterSynchronize(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    for (Stream stream :
         {hooks.getDefaultStream(DeviceIndex(i)), hooks.getNewStream(DeviceIndex(i))}) {
      EXPECT_NO_THROW(hooks.synchronizeStream(stream))
          << "synchronizeStream(" << stream << ")";
      EXPECT_TRUE(hooks.queryStream(stream))
          << "queryStream(" << stream << ") right after synchronizeStream";
    }
  }
}

}  // namespace

std::vector<ConformanceCase> streamsCases() {
  constexpr HookGroup g = HookGroup::Streams;
  return {
      {g,
       "DefaultStreamIsStreamZeroOfItsDevice",
       {"getDefaultStream"},
       true,
       defaultStreamIsStreamZeroOfItsDevice},
      {g,
       "CurrentStreamIsDefaultUntilSet",
       {"getCurrentStream", "getDefaultStream"},
       true,
       currentStreamIsDefaultUntilSet},
      {g,
       "CurrentStreamIsPerThreadAndPerDevice",
       {"getCurrentStream", "setCurrentStream", "getNewStream"},
       true,
       currentStreamIsPerThreadAndPerDevice},
      {g,
       "NewStreamsHonourPriorityRange",
       {"getNewStream", "streamPriorityRange"},
       true,
       newStreamsHonourPriorityRange},
      {g,
       "ExchangeStreamReturnsPreviousStream",
       {"exchangeStream", "getCurrentStream"},
       true,
       exchangeStreamReturnsPreviousStream},
      {g,
       "StreamArgumentsAreValidated",
       {"setCurrentStream", "queryStream", "synchronizeStream"},
       true,
       streamArgumentsAreValidated},
      {g,
       "QueryIsTrueAfterSynchronize",
       {"synchronizeStream", "queryStream", "getNewStream"},
       true,
       queryIsTrueAfterSynchronize},
  };
}

}  // namespace accel::conformance::detail
