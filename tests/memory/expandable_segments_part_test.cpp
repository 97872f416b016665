// ExpandableSegments (src/core/memory/device_cache/expandable_segments.h) on
// its own, over the fake source: a growing segment's range is reserved for
// the whole capacity, it grows and shrinks at its end in whole steps, never
// past its range, and a segment with nothing mapped gives its range back.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "accel/memory/size_rules.h"
#include "memory/device_cache/expandable_segments.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory::detail {
namespace {

using testing::kMiB;
constexpr std::size_t kPage = 2 * kMiB;

class ExpandableSegmentsTest : public ::testing::Test {
 protected:
  // A segment of `stream` over a range reserved for `rounded` bytes.
  Segment& reserve(StreamId stream, std::size_t rounded, const ReserveCap& cap = {}) {
    std::size_t range = 0;
    void* base = expandable_.reserveRange(rounded, cap, range);
    EXPECT_NE(base, nullptr);
    auto& segment = segments_.emplace_back(std::make_unique<Segment>());
    segment->base = static_cast<std::byte*>(base);
    segment->stream = stream;
    expandable_.adopt(*segment, range);
    return *segment;
  }

  testing::FakeSegmentSource source_{64 * kMiB, false, kPage};
  ExpandableSegments expandable_{source_, 0};
  std::vector<std::unique_ptr<Segment>> segments_;
};

TEST_F(ExpandableSegmentsTest, TheStepIsThePageAtLeastTheLargeRounding) {
  EXPECT_EQ(expandable_.step(), std::max(kPage, kRoundLarge));
  testing::FakeSegmentSource small_pages(kMiB, false, 4096);
  EXPECT_EQ(ExpandableSegments(small_pages, 0).step(), kRoundLarge);
  testing::FakeSegmentSource huge_pages(kMiB, false, 64 * kMiB);
  EXPECT_EQ(ExpandableSegments(huge_pages, 0).step(), 64 * kMiB);
}

TEST_F(ExpandableSegmentsTest, ARangeCoversTheCapacityTheCapOrTheRequest) {
  std::size_t range = 0;
  ASSERT_NE(expandable_.reserveRange(kMiB, {}, range), nullptr);
  EXPECT_EQ(range, 64 * kMiB);  // the source's total
  ASSERT_NE(
      expandable_.reserveRange(kMiB, ReserveCap{true, 7 * kMiB, std::nullopt, 0}, range),
      nullptr);
  EXPECT_EQ(range, 8 * kMiB);  // the cap, in whole steps
  ASSERT_NE(expandable_.reserveRange(100 * kMiB, {}, range), nullptr);
  EXPECT_EQ(range, 100 * kMiB);  // a request beyond the capacity
  testing::FakeSegmentSource untold(0, false, kPage);
  ExpandableSegments blind(untold, 0);
  ASSERT_NE(blind.reserveRange(kMiB, {}, range), nullptr);
  EXPECT_EQ(range, std::size_t{64} << 30);  // a source that cannot tell
  EXPECT_EQ(source_.reservations.load(), 3);
}

TEST_F(ExpandableSegmentsTest, AStreamHasOneGrowingSegment) {
  Segment& segment = reserve(5, kMiB);
  EXPECT_TRUE(segment.expandable);
  EXPECT_EQ(segment.reserved, 64 * kMiB);
  EXPECT_EQ(expandable_.of(5), &segment);
  EXPECT_EQ(expandable_.of(6), nullptr);
}

TEST_F(ExpandableSegmentsTest, GrowthIsInWholeStepsAndCountsAFreeTail) {
  EXPECT_EQ(expandable_.growthFor(3 * kMiB, 0), 4 * kMiB);
  EXPECT_EQ(expandable_.growthFor(3 * kMiB, kMiB), 2 * kMiB);
  EXPECT_EQ(expandable_.growthFor(3 * kMiB, 5 * kMiB), 0u);
}

TEST_F(ExpandableSegmentsTest, MappingGrowsTheSegmentButNeverPastItsRange) {
  Segment& segment = reserve(0, kMiB, ReserveCap{true, 8 * kMiB, std::nullopt, 0});
  ASSERT_TRUE(expandable_.map(segment, 4 * kMiB));
  EXPECT_EQ(segment.size, 4 * kMiB);
  EXPECT_EQ(source_.mapped(), 4 * kMiB);
  EXPECT_FALSE(expandable_.map(segment, 6 * kMiB));  // past the 8 MiB range
  EXPECT_EQ(segment.size, 4 * kMiB);
  EXPECT_EQ(source_.mapped(), 4 * kMiB);
  testing::FakeSegmentSource full(2 * kMiB, false, kPage);
  ExpandableSegments refused(full, 0);
  Segment other;
  other.reserved = 8 * kMiB;
  EXPECT_FALSE(refused.map(other, 4 * kMiB));  // the source refuses
  EXPECT_EQ(other.size, 0u);
}

TEST_F(ExpandableSegmentsTest, AFreeTailIsUnmappedDownToItsFirstStep) {
  Segment& segment = reserve(0, kMiB);
  ASSERT_TRUE(expandable_.map(segment, 8 * kMiB));
  Block tail;
  tail.ptr = segment.base + 3 * kMiB;  // inside the second step
  tail.size = 5 * kMiB;
  EXPECT_EQ(expandable_.unmappable(segment, tail), 4 * kMiB);
  expandable_.unmap(segment, 4 * kMiB);
  EXPECT_EQ(segment.size, 4 * kMiB);
  EXPECT_EQ(source_.mapped(), 4 * kMiB);
  tail.ptr = segment.base + 4 * kMiB - 512;  // in the last step left: nothing to unmap
  EXPECT_EQ(expandable_.unmappable(segment, tail), 0u);
  tail.ptr = segment.base;  // the whole segment is free
  EXPECT_EQ(expandable_.unmappable(segment, tail), 4 * kMiB);
}

TEST_F(ExpandableSegmentsTest, ReleasingARangeForgetsItsSegment) {
  Segment& segment = reserve(2, kMiB);
  expandable_.releaseRange(segment);
  EXPECT_EQ(expandable_.of(2), nullptr);
  EXPECT_EQ(source_.range_releases.load(), 1);
  Segment& mapped = reserve(3, kMiB);
  ASSERT_TRUE(expandable_.map(mapped, 2 * kMiB));
  expandable_.giveBack(mapped);  // as the device goes
  EXPECT_EQ(source_.mapped(), 0u);
  EXPECT_EQ(source_.range_releases.load(), 2);
}

TEST_F(ExpandableSegmentsTest, ForgottenSegmentsStopGrowingWithoutTheSource) {
  Segment& inherited = reserve(1, kMiB);
  Segment& own = reserve(2, kMiB);
  expandable_.forgetIf([&](const Segment* segment) { return segment == &inherited; });
  EXPECT_EQ(expandable_.of(1), nullptr);
  EXPECT_EQ(expandable_.of(2), &own);
  EXPECT_EQ(source_.range_releases.load(), 0);
}

TEST_F(ExpandableSegmentsTest, TheTailIsTheLastBlock) {
  Segment segment;
  EXPECT_EQ(ExpandableSegments::tailOf(segment), nullptr);
  Block first;
  Block second;
  first.next = &second;
  second.prev = &first;
  segment.head = &first;
  EXPECT_EQ(ExpandableSegments::tailOf(segment), &second);
}

}  // namespace
}  // namespace accel::memory::detail
