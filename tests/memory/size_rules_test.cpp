#include "accel/memory/size_rules.h"
#include "memory/test_units.h"

#include <gtest/gtest.h>

namespace accel::memory {
namespace {

using testing::kMiB;

TEST(SizeRules, RoundsToThe512ByteQuantum) {
  EXPECT_EQ(roundSize(0), 512u);
  EXPECT_EQ(roundSize(1), 512u);
  EXPECT_EQ(roundSize(512), 512u);
  EXPECT_EQ(roundSize(513), 1024u);
  EXPECT_EQ(roundSize(3 * kMiB + 1), 3 * kMiB + 512);
}

TEST(SizeRules, PowerOfTwoDivisionsRoundToEqualSteps) {
  // 4 divisions between 1 GiB and 2 GiB: 1.25 GiB steps.
  const std::size_t gib = std::size_t{1} << 30;
  EXPECT_EQ(roundSize(gib + 1, 4), gib + gib / 4);
  EXPECT_EQ(roundSize(gib + gib / 4 + 1, 4), gib + gib / 2);
  EXPECT_EQ(roundSize(gib, 4), gib);  // a power of two stays
  // Where a step would be below the quantum, the quantum rules.
  EXPECT_EQ(roundSize(1000, 4), 1024u);
  EXPECT_EQ(roundSize(1500, 8), 1536u);
}

TEST(SizeRules, SmallRequestsGoToTwoMiBSegments) {
  EXPECT_TRUE(isSmallSize(kMiB));
  EXPECT_FALSE(isSmallSize(kMiB + 512));
  EXPECT_EQ(segmentSize(512), 2 * kMiB);
  EXPECT_EQ(segmentSize(kMiB), 2 * kMiB);
}

TEST(SizeRules, LargeRequestsGoToTwentyMiBOrTheirOwnSegment) {
  EXPECT_EQ(segmentSize(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(segmentSize(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(segmentSize(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(segmentSize(10 * kMiB + 512), 12 * kMiB);
  EXPECT_EQ(segmentSize(101 * kMiB), 102 * kMiB);
}

TEST(SizeRules, SmallPoolSplitsWhenAQuantumRemains) {
  EXPECT_TRUE(shouldSplit(2 * kMiB, 2 * kMiB - 512, true));
  EXPECT_FALSE(shouldSplit(1024, 1024, true));
}

TEST(SizeRules, LargePoolSplitsOnlyWhenMoreThanOneMiBRemains) {
  EXPECT_FALSE(shouldSplit(20 * kMiB, 19 * kMiB, false));
  EXPECT_TRUE(shouldSplit(20 * kMiB, 19 * kMiB - 512, false));
}

TEST(SizeRules, OversizeRequestsAreNotSplitOffButExpandableSegmentsKeepQuanta) {
  EXPECT_FALSE(shouldSplit(60 * kMiB, 40 * kMiB, false, 32 * kMiB));
  EXPECT_TRUE(shouldSplit(60 * kMiB, 20 * kMiB, false, 32 * kMiB));
  EXPECT_TRUE(shouldSplit(20 * kMiB, 19 * kMiB, false, 0, /*expandable=*/true));
}

TEST(SizeRules, OversizeBlocksServeOnlyOversizeRequestsWithBoundedWaste) {
  const std::size_t max_split = 40 * kMiB;
  EXPECT_TRUE(mayServe(30 * kMiB, 2 * kMiB, 0));
  EXPECT_TRUE(mayServe(30 * kMiB, 2 * kMiB, max_split));
  EXPECT_FALSE(mayServe(50 * kMiB, 2 * kMiB, max_split));
  EXPECT_TRUE(mayServe(50 * kMiB, 45 * kMiB, max_split));
  EXPECT_FALSE(mayServe(80 * kMiB, 45 * kMiB, max_split));  // wastes 35 MiB
  EXPECT_FALSE(mayServe(kMiB, 2 * kMiB, 0));
}

}  // namespace
}  // namespace accel::memory
