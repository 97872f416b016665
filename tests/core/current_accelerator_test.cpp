// Context::currentAccelerator in a process of its own, so that this file
// chooses every registered type (each test also passes alone, as ctest runs
// them): the order (built-in types, then run-time
// types by name, simulated ones last), that a registration after a query is
// seen (the order is cached per hooks-table generation), that availability
// is asked on every call, and racing registrations (run under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "accel/context.h"
#include "accel/hooks_table.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using testing::registerTestBackend;
using testing::TestHooks;

TEST(CurrentAcceleratorTest, RunTimeTypesComeByNameNotRegistrationOrderSimulatedLast) {
  Context& context = globalContext();
  // Registered in the order a host might load them; chosen by name, with the
  // simulated openreg after every real device.
  TestHooks& openreg = registerTestBackend("openreg", 1);
  EXPECT_EQ(context.currentAccelerator(), openreg.deviceType());
  TestHooks& zeta = registerTestBackend("order_zeta", 1);
  EXPECT_EQ(context.currentAccelerator(), zeta.deviceType());
  TestHooks& alpha = registerTestBackend("order_alpha", 1);
  EXPECT_EQ(context.currentAccelerator(), alpha.deviceType());

  alpha.setAvailable(false);
  EXPECT_EQ(context.currentAccelerator(), zeta.deviceType());
  zeta.setAvailable(false);
  EXPECT_EQ(context.currentAccelerator(), openreg.deviceType());
  openreg.setAvailable(false);
  EXPECT_EQ(context.currentAccelerator(), std::nullopt);
  alpha.setAvailable(true);
  EXPECT_EQ(context.currentAccelerator(), alpha.deviceType());

  // A built-in type registered later still comes first.
  TestHooks& hip = registerTestBackend("hip", 1);
  EXPECT_EQ(context.currentAccelerator(), DeviceType::HIP);
  hip.setAvailable(false);
  EXPECT_EQ(context.currentAccelerator(), alpha.deviceType());
  hip.setAvailable(true);
  zeta.setAvailable(true);
  openreg.setAvailable(true);
}

TEST(CurrentAcceleratorTest, AnExplicitChoiceWinsUntilClearedAndSurvivesRegistrations) {
  Context& context = globalContext();
  TestHooks& late = registerTestBackend("order_late", 1);
  context.setCurrentAccelerator(late.deviceType());
  late.setAvailable(false);
  EXPECT_EQ(context.currentAccelerator(), late.deviceType());
  TestHooks& first = registerTestBackend("order_aaa", 1);
  EXPECT_EQ(context.currentAccelerator(), late.deviceType());
  context.clearCurrentAccelerator();
  std::optional<DeviceType> after = context.currentAccelerator();
  ASSERT_TRUE(after.has_value());
  EXPECT_NE(*after, late.deviceType());
  EXPECT_TRUE(*after == first.deviceType() || toIndex(*after) < kNumBuiltinDeviceTypes);
  late.setAvailable(true);
}

// Readers race with registrations: each answer is a registered, available
// type, and once the registrations are done the type that sorts first is
// the answer. Under TSan this checks the published order's handover.
TEST(CurrentAcceleratorTest, ReadersRacingRegistrationsSeeAConsistentOrder) {
  Context& context = globalContext();
  // Only run-time types take part (the first test may have registered hip).
  if (isHooksRegistered(DeviceType::HIP))
    static_cast<TestHooks&>(getHooks(DeviceType::HIP)).setAvailable(false);
  registerTestBackend("zz_race_base", 1);  // readers always have an answer
  std::atomic<bool> done{false};
  std::atomic<int> bad_answers{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        std::optional<DeviceType> t = context.currentAccelerator();
        if (!t || !isHooksRegistered(*t) || !getHooks(*t).isAvailable()) ++bad_answers;
      }
    });
  }
  // Each new name sorts first, so every registration changes the answer.
  for (int i = 19; i >= 0; --i) registerTestBackend("aa_race_" + std::to_string(i), 1);
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad_answers.load(), 0);
  std::optional<DeviceType> last = context.currentAccelerator();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(deviceTypeName(*last), "aa_race_0");
}

}  // namespace
}  // namespace accel
