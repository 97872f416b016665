// Expandable segments: the figures while a segment grows, and a first growth
// that fails.
#include <gtest/gtest.h>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kMiB;
using testing::MiB;

using testing::stream0;

TEST(ExpandableSegments, GrowingOverAFreeTailKeepsInactiveSplitBytesExact) {
  FakeSegmentSource source(std::size_t{1} << 30, false, 2 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source,
                             parseAllocatorSettings("expandable_segments:true"));
  DataPtr a = allocator.allocate(0, 3 * kMiB, stream0());  // maps 4, 1 MiB free tail
  EXPECT_EQ(allocator.stats(0).inactive_split_bytes.current, 1 * MiB);
  DataPtr b = allocator.allocate(0, 12 * kMiB, stream0());  // the tail grows to 13
  MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.reserved_bytes.current, 16 * MiB);
  EXPECT_EQ(stats.inactive_split_bytes.current, 1 * MiB);  // 13 - 12
  EXPECT_EQ(stats.inactive_split.current, 1);
  DataPtr c = allocator.allocate(0, 4 * kMiB, stream0());  // a new block after b's rest
  stats = allocator.stats(0);
  EXPECT_EQ(stats.inactive_split_bytes.current, 1 * MiB);
  EXPECT_GE(stats.inactive_split_bytes.peak, stats.inactive_split_bytes.current);
  a.reset();
  b.reset();
  c.reset();
  allocator.emptyCache();
  stats = allocator.stats(0);
  EXPECT_EQ(stats.inactive_split_bytes.current, 0);
  EXPECT_EQ(stats.inactive_split.current, 0);
  EXPECT_EQ(stats.reserved_bytes.current, 0);
  EXPECT_EQ(source.used(), 0u);
}

TEST(ExpandableSegments, AFirstGrowthThatFailsLeavesNoSegmentBehind) {
  FakeSegmentSource source(8 * kMiB, false, 2 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source,
                             parseAllocatorSettings("expandable_segments:true"));
  EXPECT_THROW((void)allocator.allocate(0, 20 * kMiB, stream0()), OutOfMemory);
  MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.segments.current, 0);
  EXPECT_EQ(stats.reserved_bytes.current, 0);
  EXPECT_EQ(source.range_releases.load(), source.reservations.load());
  EXPECT_TRUE(allocator.snapshot({.device = 0}).segments.empty());
  // The device still serves what fits, from one segment.
  DataPtr a = allocator.allocate(0, 6 * kMiB, stream0());
  stats = allocator.stats(0);
  EXPECT_EQ(stats.segments.current, 1);
  EXPECT_EQ(stats.reserved_bytes.current, 6 * MiB);
  a.reset();
  allocator.emptyCache();
  EXPECT_EQ(allocator.stats(0).segments.current, 0);
  EXPECT_EQ(source.range_releases.load(), source.reservations.load());
}

// ACCEL_ALLOC_CONF is read by every backend in the process: where the source
// cannot map pages, expandable_segments:true is ignored (said once on stderr)
// instead of failing the allocator, and so every allocation, of that backend.
TEST(ExpandableSegments, AFirstGrowthPastTheCapReservesNoAddressSpace) {
  FakeSegmentSource source(std::size_t{1} << 30, false, 2 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source,
                             parseAllocatorSettings("expandable_segments:true"));
  allocator.setMemoryFraction(0, 0.0);
  EXPECT_THROW((void)allocator.allocate(0, 2 * kMiB, stream0()), OutOfMemory);
  EXPECT_EQ(source.reservations.load(), 0);
  EXPECT_EQ(allocator.stats(0).segments.current, 0);
  // A cap of 8 MiB: a first growth of 20 MiB is refused the same way, one of
  // 6 MiB reserves a range and is served.
  allocator.setMemoryFraction(0, 8.0 / 1024.0);
  EXPECT_THROW((void)allocator.allocate(0, 20 * kMiB, stream0()), OutOfMemory);
  EXPECT_EQ(source.reservations.load(), 0);
  DataPtr a = allocator.allocate(0, 6 * kMiB, stream0());
  EXPECT_EQ(source.reservations.load(), 1);
  a.reset();
  allocator.emptyCache();
  EXPECT_EQ(source.range_releases.load(), source.reservations.load());
}

TEST(ExpandableSegments, AreIgnoredWithOneWarningWhereTheSourceCannotMapPages) {
  FakeSegmentSource source(std::size_t{1} << 30);  // page size 0: no page mapping
  const AllocatorSettings expandable = parseAllocatorSettings("expandable_segments:true");
  ::testing::internal::CaptureStderr();
  CachingAllocator allocator(DeviceType::CUDA, 1, source, expandable);
  allocator.setSettings(expandable);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("'expandable_segments:true' is ignored for 'cuda'"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("ignored"), said.rfind("ignored"))
      << "said more than once: " << said;
  EXPECT_FALSE(allocator.settings().expandable_segments);
  DataPtr data = allocator.allocate(0, 3 * kMiB, stream0());
  EXPECT_TRUE(data);
  EXPECT_EQ(source.reservations, 0);
}

}  // namespace
}  // namespace accel::memory
