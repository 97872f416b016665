// PrivatePools (src/core/memory/device_cache/private_pools.h) on its own: a
// pool lives while it has users, a stream allocates to one retained pool at
// a time, and the last release stops every stream allocating to the pool
// and hands the pool back.
#include <gtest/gtest.h>

#include "accel/error.h"
#include "memory/device_cache/private_pools.h"

namespace accel::memory::detail {
namespace {

constexpr MempoolId kPool{1, 0};
constexpr MempoolId kOther{2, 0};
constexpr DeviceIndex kPoolsDevice = 3;

TEST(PrivatePoolsTest, APoolLivesWhileItHasUsers) {
  PrivatePools pools;
  EXPECT_EQ(pools.find(kPool), nullptr);
  pools.retain(kPool);
  pools.retain(kPool);
  ASSERT_NE(pools.find(kPool), nullptr);
  EXPECT_EQ(pools.find(kPool)->users, 2);
  EXPECT_EQ(pools.release(kPool, kPoolsDevice), nullptr);  // one user left
  PrivatePool* last = pools.release(kPool, kPoolsDevice);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->id, kPool);
  EXPECT_EQ(last->users, 0);
  EXPECT_EQ(pools.find(kPool), last);  // kept until its memory is gone
  pools.erase(last);
  EXPECT_EQ(pools.find(kPool), nullptr);
}

TEST(PrivatePoolsTest, ReleasingAPoolWithoutUsersIsAnErrorNamingTheDevice) {
  PrivatePools pools;
  try {
    (void)pools.release(kPool, kPoolsDevice);
    FAIL() << "release of a pool never retained";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("has no users on device 3"), std::string::npos)
        << e.what();
  }
  pools.retain(kPool);
  ASSERT_NE(pools.release(kPool, kPoolsDevice), nullptr);
  EXPECT_THROW((void)pools.release(kPool, kPoolsDevice), InvalidArgument);
}

TEST(PrivatePoolsTest, AStreamAllocatesToOneRetainedPoolAtATime) {
  PrivatePools pools;
  EXPECT_THROW((void)pools.beginAllocating(kPool, 7, kPoolsDevice), InvalidArgument);
  EXPECT_FALSE(pools.anyAllocating());
  pools.retain(kPool);
  pools.retain(kOther);
  EXPECT_TRUE(pools.beginAllocating(kPool, 7, kPoolsDevice));  // a new stream
  EXPECT_TRUE(pools.anyAllocating());
  EXPECT_EQ(pools.allocatingTo(7), pools.find(kPool));
  EXPECT_EQ(pools.allocatingTo(8), nullptr);
  EXPECT_FALSE(pools.beginAllocating(kOther, 7, kPoolsDevice));  // it changes pools
  EXPECT_EQ(pools.allocatingTo(7), pools.find(kOther));
  pools.endAllocating(kPool, 7);  // not its pool: nothing changes
  EXPECT_EQ(pools.allocatingTo(7), pools.find(kOther));
  pools.endAllocating(kOther, 7);
  EXPECT_EQ(pools.allocatingTo(7), nullptr);
  EXPECT_FALSE(pools.anyAllocating());
}

TEST(PrivatePoolsTest, StreamsShareAPoolUntilItsLastRelease) {
  PrivatePools pools;
  pools.retain(kPool);
  pools.retain(kOther);
  ASSERT_TRUE(pools.beginAllocating(kPool, 7, kPoolsDevice));
  ASSERT_TRUE(pools.beginAllocating(kPool, 8, kPoolsDevice));
  ASSERT_TRUE(pools.beginAllocating(kOther, 9, kPoolsDevice));
  EXPECT_EQ(pools.allocatingTo(8), pools.find(kPool));
  ASSERT_NE(pools.release(kPool, kPoolsDevice), nullptr);
  EXPECT_EQ(pools.allocatingTo(7), nullptr);
  EXPECT_EQ(pools.allocatingTo(8), nullptr);
  EXPECT_EQ(pools.allocatingTo(9), pools.find(kOther));  // another pool's stream stays
}

}  // namespace
}  // namespace accel::memory::detail
