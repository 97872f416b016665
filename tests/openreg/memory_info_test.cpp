// openreg's answers to the memory hooks that read or cap the device's
// capacity (getMemoryInfo, setMemoryFraction), the pinned cache's statistics
// (hostMemoryStats), and their refusals on a lost device.
#include <gmock/gmock.h>

#include "openreg_test_support.h"
#include "support/error_of.h"
#include "support/sizes.h"

namespace {

using openreg_test::OpenRegTest;
using ::testing::HasSubstr;

using accel::testing::kMiB;
constexpr std::size_t kCapacity = 64 * kMiB;           // openreg_test_support.h
constexpr std::size_t kLargeSegmentBytes = 20 * kMiB;  // for 1..10 MiB requests

using OpenRegMemoryInfoTest = OpenRegTest;

TEST_F(OpenRegMemoryInfoTest, TotalIsTheConfiguredCapacityAndFreeLosesWhatSegmentsBack) {
  hooks().emptyCache();
  const accel::DeviceMemoryInfo before = hooks().getMemoryInfo(4);
  EXPECT_EQ(before.total_bytes, kCapacity);
  EXPECT_EQ(before.free_bytes, kCapacity);  // nothing held after emptyCache
  accel::DataPtr block = hooks().getDeviceAllocator(4).allocate(4 * kMiB);
  const accel::DeviceMemoryInfo during = hooks().getMemoryInfo(4);
  EXPECT_EQ(during.total_bytes, kCapacity);
  // The cache's segment counts as used, not just the block: cudaMemGetInfo's view.
  EXPECT_EQ(during.free_bytes, kCapacity - kLargeSegmentBytes);
  block.reset();
  EXPECT_EQ(hooks().getMemoryInfo(4).free_bytes,
            kCapacity - kLargeSegmentBytes);  // cached
  hooks().emptyCache();
  EXPECT_EQ(hooks().getMemoryInfo(4).free_bytes, kCapacity);
}

TEST_F(OpenRegMemoryInfoTest, MemoryFractionCapsReservedBytesAndOneLiftsTheCap) {
  hooks().emptyCache();
  hooks().setMemoryFraction(0.25, 6);  // 16 MiB: a 20 MiB segment does not fit
  EXPECT_THROW((void)hooks().getDeviceAllocator(6).allocate(4 * kMiB),
               accel::OutOfMemory);
  accel::DataPtr small = hooks().getDeviceAllocator(6).allocate(kMiB);  // 2 MiB segment
  EXPECT_TRUE(small);
  hooks().setMemoryFraction(1.0, 6);
  EXPECT_TRUE(hooks().getDeviceAllocator(6).allocate(4 * kMiB));
  // Other devices were never capped.
  EXPECT_TRUE(hooks().getDeviceAllocator(7).allocate(4 * kMiB));
}

TEST_F(OpenRegMemoryInfoTest, FractionOutsideZeroToOneIsRefusedNamingTheHook) {
  const std::string message = accel::testing::errorOf<accel::InvalidArgument>(
      [&] { hooks().setMemoryFraction(1.5, 0); });
  EXPECT_THAT(
      message,
      HasSubstr(std::string(accel::hookInfo(accel::HookId::setMemoryFraction).name)));
  EXPECT_THAT(message, HasSubstr("between 0 and 1"));
  EXPECT_THAT(message, HasSubstr("'openreg'"));
}

TEST_F(OpenRegMemoryInfoTest, HostMemoryStatsFollowThePinnedCache) {
  const accel::MemoryStats before = hooks().hostMemoryStats();
  accel::DataPtr pinned = hooks().getPinnedMemoryAllocator().allocate(10000);
  const accel::MemoryStats during = hooks().hostMemoryStats();
  EXPECT_EQ(during.allocations.current, before.allocations.current + 1);
  EXPECT_GE(during.allocated_bytes.current, before.allocated_bytes.current + 10000);
  pinned.reset();
  EXPECT_EQ(hooks().hostMemoryStats().allocations.current, before.allocations.current);
}

// The memory figures are the core's (its caches over openreg's memory, on
// the host): a lost device still reports them, while everything that reaches
// the device fails.
TEST_F(OpenRegMemoryInfoTest, LostDeviceRefusesAllocationsButKeepsTheCoresFigures) {
  accel::openreg::loseDeviceAfter(3, 0);  // lost at its next operation
  EXPECT_THROW((void)accel::openreg::allocate(64, 3), accel::DeviceError);
  ASSERT_TRUE(accel::openreg::isDeviceLost(3));
  EXPECT_EQ(hooks().getMemoryInfo(3).total_bytes, hooks().getMemoryInfo(2).total_bytes);
  EXPECT_NO_THROW((void)hooks().memoryStats(3));
  EXPECT_THROW((void)accel::openreg::allocate(64, 3), accel::DeviceError);
}

}  // namespace
