// The streams group: default, current (per thread and device), new, exchange,
// query and synchronize.
#include <climits>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace streams_cases {
namespace {

void defaultStreamIsStreamZeroOfItsDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(hooks.getDefaultStream(DeviceIndex(i)),
              Stream(deviceOf(hooks, i), kDefaultStreamId))
        << hookName(HookId::getDefaultStream) << "(" << i << ")";
  }
  expectCurrentDeviceResolved(hooks, HookId::getDefaultStream,
                              [&](DeviceIndex i) { return hooks.getDefaultStream(i); });
}

void currentStreamIsDefaultUntilSet(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  inNewThread([&] {
    for (int i = 0; i < count; ++i) {
      EXPECT_EQ(hooks.getCurrentStream(DeviceIndex(i)),
                hooks.getDefaultStream(DeviceIndex(i)))
          << hookName(HookId::getCurrentStream) << "(" << i << ") on a new thread";
    }
  });
}

void currentStreamIsPerThreadAndPerDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  inNewThread([&] {
    Stream mine = hooks.getNewStream(0);
    hooks.setCurrentStream(mine);
    EXPECT_EQ(hooks.getCurrentStream(0), mine)
        << hookName(HookId::getCurrentStream) << "(0) after "
        << hookName(HookId::setCurrentStream);
    EXPECT_EQ(hooks.getCurrentStream(), mine)
        << hookName(HookId::getCurrentStream) << "(-1) with device 0 current, after "
        << hookName(HookId::setCurrentStream);
    if (count >= 2) {
      EXPECT_EQ(hooks.getCurrentStream(1), hooks.getDefaultStream(1))
          << hookName(HookId::getCurrentStream) << "(1) after "
          << hookName(HookId::setCurrentStream)
          << "(a stream of device 0): the "
             "current "
             "stream must be per device";
    }
    inNewThread([&] {
      EXPECT_EQ(hooks.getCurrentStream(0), hooks.getDefaultStream(0))
          << hookName(HookId::getCurrentStream)
          << "(0) on a thread started after another thread called "
          << hookName(HookId::setCurrentStream)
          << ": the current stream must be per thread";
      hooks.setCurrentStream(hooks.getNewStream(0));
    });
    EXPECT_EQ(hooks.getCurrentStream(0), mine)
        << hookName(HookId::getCurrentStream) << "(0) after another thread called "
        << hookName(HookId::setCurrentStream)
        << ": the "
           "current "
           "stream must be per thread";
  });
}

void newStreamsHonourPriorityRange(AcceleratorHooks& hooks) {
  auto [lowest, greatest] = hooks.streamPriorityRange();
  EXPECT_LE(lowest, 0) << hookName(HookId::streamPriorityRange)
                       << "(): 0, the default priority, must be in range";
  EXPECT_GE(greatest, 0) << hookName(HookId::streamPriorityRange)
                         << "(): 0, the default priority, must be in range";
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    for (int priority : {lowest, 0, greatest}) {
      Stream stream = hooks.getNewStream(DeviceIndex(i), priority);
      EXPECT_EQ(stream.device, deviceOf(hooks, i))
          << hookName(HookId::getNewStream) << "(" << i << ", " << priority << ").device";
      EXPECT_NE(stream.id, kDefaultStreamId)
          << hookName(HookId::getNewStream) << "(" << i << ", " << priority
          << ") returned the default stream";
    }
  }
  if (greatest < INT_MAX) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { (void)hooks.getNewStream(0, greatest + 1); }, {"priority"}))
        << hookName(HookId::getNewStream) << "(0, " << greatest + 1
        << "), above the range";
  }
  if (lowest > INT_MIN) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { (void)hooks.getNewStream(0, lowest - 1); }, {"priority"}))
        << hookName(HookId::getNewStream) << "(0, " << lowest - 1 << "), below the range";
  }
  expectIndexRejected(hooks, HookId::getNewStream, count,
                      [&](DeviceIndex i) { return hooks.getNewStream(i); });
}

void exchangeStreamReturnsPreviousStream(AcceleratorHooks& hooks) {
  inNewThread([&] {
    Stream fresh = hooks.getNewStream(0);
    Stream previous = hooks.exchangeStream(fresh);
    EXPECT_EQ(previous, hooks.getDefaultStream(0))
        << hookName(HookId::exchangeStream)
        << "() on a new thread returns the default stream";
    EXPECT_EQ(hooks.getCurrentStream(0), fresh)
        << hookName(HookId::getCurrentStream) << "(0) after "
        << hookName(HookId::exchangeStream);
    EXPECT_EQ(hooks.exchangeStream(previous), fresh)
        << hookName(HookId::exchangeStream) << "(back)";
    EXPECT_EQ(hooks.getCurrentStream(0), previous)
        << hookName(HookId::getCurrentStream) << "(0) after exchanging back";
  });
}

void streamArgumentsAreValidated(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  Stream foreign(Device(DeviceType::CPU, 0), kDefaultStreamId);
  EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { hooks.setCurrentStream(foreign); },
                                                {"cpu"}))
      << hookName(HookId::setCurrentStream) << "(a cpu stream)";
  EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { (void)hooks.queryStream(foreign); },
                                                {"cpu"}))
      << hookName(HookId::queryStream) << "(a cpu stream)";
  if (count < kMaxDevicesPerType) {
    Stream beyond(deviceOf(hooks, count), kDefaultStreamId);
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.synchronizeStream(beyond); }, {rangeMessage(hooks, count)}))
        << hookName(HookId::synchronizeStream) << "(a stream of device " << count << ")";
  }
}

void queryIsTrueAfterSynchronize(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    for (Stream stream :
         {hooks.getDefaultStream(DeviceIndex(i)), hooks.getNewStream(DeviceIndex(i))}) {
      EXPECT_NO_THROW(hooks.synchronizeStream(stream))
          << hookName(HookId::synchronizeStream) << "(" << stream << ")";
      EXPECT_TRUE(hooks.queryStream(stream))
          << hookName(HookId::queryStream) << "(" << stream << ") right after "
          << hookName(HookId::synchronizeStream);
    }
  }
}

}  // namespace
}  // namespace streams_cases

std::vector<ConformanceCase> streamsCases() {
  using namespace streams_cases;
  using enum HookId;
  return {
      deviceCase("DefaultStreamIsStreamZeroOfItsDevice",
                 defaultStreamIsStreamZeroOfItsDevice, {getDefaultStream}),
      deviceCase("CurrentStreamIsDefaultUntilSet", currentStreamIsDefaultUntilSet,
                 {getCurrentStream, getDefaultStream}),
      deviceCase("CurrentStreamIsPerThreadAndPerDevice",
                 currentStreamIsPerThreadAndPerDevice,
                 {getCurrentStream, setCurrentStream, getNewStream}),
      deviceCase("NewStreamsHonourPriorityRange", newStreamsHonourPriorityRange,
                 {getNewStream, streamPriorityRange}),
      deviceCase("ExchangeStreamReturnsPreviousStream",
                 exchangeStreamReturnsPreviousStream, {exchangeStream, getCurrentStream}),
      deviceCase("StreamArgumentsAreValidated", streamArgumentsAreValidated,
                 {setCurrentStream, queryStream, synchronizeStream}),
      deviceCase("QueryIsTrueAfterSynchronize", queryIsTrueAfterSynchronize,
                 {synchronizeStream, queryStream, getNewStream})};
}

}  // namespace accel::conformance::detail
