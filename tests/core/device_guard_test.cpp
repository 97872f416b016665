#include "accel/device_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using ::testing::HasSubstr;
using testing::registerTestBackend;
using testing::TestHooks;

class DeviceGuardTest : public ::testing::Test {
 protected:
  TestHooks& hooks_ = registerTestBackend("guarddev", 3);
  DeviceType type_ = hooks_.deviceType();
  void SetUp() override { hooks_.setCurrentDevice(0); }
  void TearDown() override {
    hooks_.clearHookFailures();
    hooks_.setCurrentDevice(0);
  }
};

// Only the guards may restore without validation (hooks.h, GuardKey).
static_assert(!std::is_default_constructible_v<GuardKey>,
              "GuardKey must not be constructible outside the guards");

TEST_F(DeviceGuardTest, ADeviceGuardNeverInitialisesTheBackend) {
  TestHooks& fresh = registerTestBackend("guard_uninitialised", 2);
  {
    DeviceGuard guard(Device(fresh.deviceType(), 1));
    EXPECT_EQ(fresh.getCurrentDevice(), 1);
  }
  EXPECT_EQ(fresh.getCurrentDevice(), 0);
  EXPECT_EQ(fresh.initCalls(), 0) << "switching devices is the low group: no init";
}

TEST_F(DeviceGuardTest, SetsTheDeviceAndRestoresItOnScopeExit) {
  {
    DeviceGuard guard(Device(type_, 2));
    EXPECT_EQ(hooks_.getCurrentDevice(), 2);
    EXPECT_EQ(guard.originalDevice(), Device(type_, 0));
    EXPECT_EQ(guard.currentDevice(), Device(type_, 2));
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(DeviceGuardTest, RestoresWhileAnExceptionUnwinds) {
  hooks_.setCurrentDevice(1);
  try {
    DeviceGuard guard(Device(type_, 2));
    ASSERT_EQ(hooks_.getCurrentDevice(), 2);
    throw std::runtime_error("work failed");
  } catch (const std::runtime_error&) {
    EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(DeviceGuardTest, NestedGuardsRestoreInReverseOrder) {
  {
    DeviceGuard outer(Device(type_, 1));
    {
      DeviceGuard inner(Device(type_, 2));
      EXPECT_EQ(hooks_.getCurrentDevice(), 2);
    }
    EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(DeviceGuardTest, MinusOneKeepsTheDeviceButStillRestoresIt) {
  hooks_.setCurrentDevice(1);
  {
    DeviceGuard guard(Device(type_, kCurrentDevice));
    EXPECT_EQ(hooks_.getCurrentDevice(), 1);
    EXPECT_EQ(guard.originalDevice(), Device(type_, 1));
    hooks_.setCurrentDevice(2);  // changed directly inside the scope
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(DeviceGuardTest, RestoresADeviceChangedDirectlyInsideTheScope) {
  {
    DeviceGuard guard(Device(type_, 0));  // same device: no switch on entry
    hooks_.setCurrentDevice(2);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(DeviceGuardTest, ResetDeviceSwitchesAndKeepsTheOriginal) {
  {
    DeviceGuard guard(Device(type_, 1));
    guard.resetDevice(Device(type_, 2));
    EXPECT_EQ(hooks_.getCurrentDevice(), 2);
    EXPECT_EQ(guard.currentDevice(), Device(type_, 2));
    EXPECT_EQ(guard.originalDevice(), Device(type_, 0));
    guard.resetDevice(Device(type_, kCurrentDevice));  // no change
    EXPECT_EQ(hooks_.getCurrentDevice(), 2);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(DeviceGuardTest, ResetDeviceToAnotherTypeIsRejected) {
  DeviceGuard guard(Device(type_, 1));
  try {
    guard.resetDevice(Device(DeviceType::CUDA, 0));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(),
                HasSubstr("the guard is for 'guarddev' devices, got 'cuda:0'"));
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(DeviceGuardTest, BadIndexThrowsFromTheConstructorAndChangesNothing) {
  hooks_.setCurrentDevice(1);
  EXPECT_THROW(DeviceGuard(Device(type_, 3)), InvalidArgument);
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(DeviceGuardTest, GuardOnATypeWithoutBackendThrows) {
  DeviceType none = registerDeviceType("guard_nobackend");
  EXPECT_THROW(DeviceGuard(Device(none, kCurrentDevice)), NotAvailable);
}

TEST_F(DeviceGuardTest, FailedRestoreIsReportedOnceAndNotThrown) {
  ::testing::internal::CaptureStderr();
  {
    DeviceGuard guard(Device(type_, 1));
    hooks_.failHook(hookInfo(HookId::setCurrentDevice).name);
  }  // the destructor's restore fails; it must not throw
  {
    DeviceGuard guard(Device(type_, kCurrentDevice));
  }  // a second failure is not printed again
  std::string printed = ::testing::internal::GetCapturedStderr();
  hooks_.clearHookFailures();
  EXPECT_THAT(printed, HasSubstr("DeviceGuard could not restore state"));
  EXPECT_THAT(printed, HasSubstr("injected failure"));
  EXPECT_EQ(printed.find("DeviceGuard", printed.find("DeviceGuard") + 1),
            std::string::npos);
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);  // the restore did not happen
}

TEST_F(DeviceGuardTest, OptionalGuardDoesNothingUntilGivenADevice) {
  {
    OptionalDeviceGuard guard;
    EXPECT_EQ(guard.originalDevice(), std::nullopt);
    EXPECT_EQ(guard.currentDevice(), std::nullopt);
    hooks_.setCurrentDevice(2);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 2);  // nothing to restore
  {
    OptionalDeviceGuard guard(std::nullopt);
    EXPECT_EQ(guard.currentDevice(), std::nullopt);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 2);
}

TEST_F(DeviceGuardTest, OptionalGuardRestoresOnceActivated) {
  {
    OptionalDeviceGuard guard;
    guard.resetDevice(Device(type_, 1));
    EXPECT_EQ(hooks_.getCurrentDevice(), 1);
    EXPECT_EQ(guard.originalDevice(), Device(type_, 0));
    guard.resetDevice(Device(type_, 2));
    EXPECT_EQ(hooks_.getCurrentDevice(), 2);
    EXPECT_EQ(guard.originalDevice(), Device(type_, 0));
    EXPECT_EQ(guard.currentDevice(), Device(type_, 2));
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
  {
    OptionalDeviceGuard guard(Device(type_, 1));
    EXPECT_EQ(hooks_.getCurrentDevice(), 1);
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

TEST_F(DeviceGuardTest, OptionalGuardResetRestoresNowAndDeactivates) {
  OptionalDeviceGuard guard(Device(type_, 2));
  guard.reset();
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
  EXPECT_EQ(guard.currentDevice(), std::nullopt);
  hooks_.setCurrentDevice(1);
  guard.reset();  // inactive: no effect
  EXPECT_EQ(hooks_.getCurrentDevice(), 1);
}

TEST_F(DeviceGuardTest, OptionalGuardRestoresWhileAnExceptionUnwinds) {
  try {
    OptionalDeviceGuard guard(Device(type_, 2));
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(hooks_.getCurrentDevice(), 0);
}

}  // namespace
}  // namespace accel
