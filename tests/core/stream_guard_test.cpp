#include "accel/stream_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using testing::registerTestBackend;
using testing::TestHooks;

// Declares no streams group: StreamGuard must fail and leave the device alone.
class NoStreamsHooks final : public AcceleratorHooks {
 public:
  explicit NoStreamsHooks(DeviceType type) : AcceleratorHooks(type, Capabilities{}) {}

 protected:
  int deviceCountImpl() const override { return 2; }
  DeviceIndex getCurrentDeviceImpl() const override { return current_; }
  void setCurrentDeviceImpl(DeviceIndex index) override { current_ = index; }

 private:
  static thread_local DeviceIndex current_;
};
thread_local DeviceIndex NoStreamsHooks::current_ = 0;

class StreamGuardTest : public ::testing::Test {
 protected:
  TestHooks& hooks_ = registerTestBackend("sguarddev", 2);
  DeviceType type_ = hooks_.deviceType();
  void SetUp() override {
    hooks_.setCurrentDevice(0);
    hooks_.setCurrentStream(hooks_.getDefaultStream(0));
    hooks_.setCurrentStream(hooks_.getDefaultStream(1));
  }
};

TEST_F(StreamGuardTest, SetsStreamAndDeviceAndRestoresBoth) {
  Stream s1 = hooks_.getNewStream(1);
  {
    StreamGuard guard(s1);
    EXPECT_EQ(hooks_.getCurrentDevice(), 1);
    EXPECT_EQ(hooks_.getCurrentStream(1), s1);
    EXPECT_EQ(guard.currentStream(), s1);
    EXPECT_EQ(guard.originalStream(), hooks_.getDefaultStream(1));
    EXPECT_EQ(guard.originalDevice(), Device(type_, 0));
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
  EXPECT_EQ(hooks_.getCurrentStream(1), hooks_.getDefaultStream(1));
}

TEST_F(StreamGuardTest, RestoresTheStreamThatWasCurrentOnTheGuardedDevice) {
  Stream previous = hooks_.getNewStream(0);
  Stream guarded = hooks_.getNewStream(0);
  hooks_.setCurrentStream(previous);
  {
    StreamGuard guard(guarded);
    EXPECT_EQ(hooks_.getCurrentStream(0), guarded);
    EXPECT_EQ(guard.originalStream(), previous);
  }
  EXPECT_EQ(hooks_.getCurrentStream(0), previous);
}

TEST_F(StreamGuardTest, LeavesOtherDevicesStreamsAlone) {
  Stream other = hooks_.getNewStream(0);
  hooks_.setCurrentStream(other);
  { StreamGuard guard(hooks_.getNewStream(1)); }
  EXPECT_EQ(hooks_.getCurrentStream(0), other);
}

TEST_F(StreamGuardTest, RestoresWhileAnExceptionUnwinds) {
  Stream s1 = hooks_.getNewStream(1);
  try {
    StreamGuard guard(s1);
    throw std::runtime_error("kernel failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
  EXPECT_EQ(hooks_.getCurrentStream(1), hooks_.getDefaultStream(1));
}

TEST_F(StreamGuardTest, StreamWithMinusOneIndexUsesTheCurrentDevice) {
  hooks_.setCurrentDevice(1);
  Stream s1 = hooks_.getNewStream(1);
  {
    StreamGuard guard(Stream(Device(type_, kCurrentDevice), s1.id));
    EXPECT_EQ(hooks_.getCurrentStream(1), s1);
    EXPECT_EQ(guard.currentStream(), s1);  // -1 resolved to the current device
  }
  EXPECT_EQ(hooks_.getCurrentStream(1), hooks_.getDefaultStream(1));
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(StreamGuardTest, UnknownStreamThrowsAndRestoresTheDevice) {
  EXPECT_THROW(StreamGuard(Stream(Device(type_, 1), 424242)), InvalidArgument);
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST(StreamGuardNoStreamsTest,
     BackendWithoutStreamsThrowsNotSupportedAndRestoresTheDevice) {
  DeviceType type = registerDeviceType("sguard_nostreams");
  registerHooks(std::make_unique<NoStreamsHooks>(type));
  AcceleratorHooks& hooks = getHooks(type);
  EXPECT_EQ(hooks.getCurrentDevice(), 0);
  EXPECT_THROW(StreamGuard(Stream(Device(type, 1), 0)), NotSupported);
  EXPECT_EQ(hooks.getCurrentDevice(), 0);
}

}  // namespace
}  // namespace accel
