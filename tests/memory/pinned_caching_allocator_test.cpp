#include "accel/memory/pinned_caching_allocator.h"

#include <gtest/gtest.h>

#include "accel/error.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::stream;

TEST(PinnedCachingAllocator, FreedBlocksAreReusedBySize) {
  testing::FakeSegmentSource source(1 << 20);
  PinnedCachingAllocator pinned(source);
  DataPtr a = pinned.allocate(3000);  // 4 KiB block
  EXPECT_EQ(a.device(), Device(DeviceType::CPU, 0));
  void* const address = a.get();
  a.reset();
  DataPtr b = pinned.allocate(4096);
  EXPECT_EQ(b.get(), address);
  DataPtr c = pinned.allocate(4096);
  EXPECT_NE(c.get(), address);
  EXPECT_EQ(source.allocations.load(), 2);
  const MemoryStats stats = pinned.stats();
  EXPECT_EQ(stats.allocated_bytes.current, 8192);
  EXPECT_EQ(stats.requested_bytes.current, 8192);
  EXPECT_EQ(stats.requested_bytes.allocated, 3000 + 8192);
  EXPECT_EQ(stats.reserved_bytes.current, 8192);
  EXPECT_EQ(stats.segments.current, 2);
  EXPECT_EQ(stats.num_device_alloc, 2);
  EXPECT_FALSE(pinned.allocate(0));
}

TEST(PinnedCachingAllocator, BlockIsReusedOnlyAfterItsEventsCompleted) {
  testing::FakeSegmentSource source(1 << 20, /*events=*/true);
  PinnedCachingAllocator pinned(source);
  DataPtr a = pinned.allocate(1024);
  void* const address = a.get();
  pinned.recordStream(a, stream(4));
  a.reset();
  EXPECT_EQ(pinned.stats().active_bytes.current, 1024);
  DataPtr b = pinned.allocate(1024);
  EXPECT_NE(b.get(), address);
  source.completeAll();
  DataPtr c = pinned.allocate(1024);
  EXPECT_EQ(c.get(), address);
  EXPECT_EQ(source.recorded_on, std::vector<StreamId>{4});
  // By raw (interior) pointer, as an asynchronous copy does.
  EXPECT_TRUE(pinned.recordStreamAt(static_cast<char*>(c.get()) + 100, stream(6)));
  int on_stack = 0;
  EXPECT_FALSE(pinned.recordStreamAt(&on_stack, stream(6)));
  c.reset();
  EXPECT_EQ(source.recorded_on, (std::vector<StreamId>{4, 6}));
}

TEST(PinnedCachingAllocator, IsPinnedPtrCountsInteriorPointersOnly) {
  testing::FakeSegmentSource source(1 << 20);
  PinnedCachingAllocator pinned(source);
  DataPtr a = pinned.allocate(1000);  // 1 KiB block
  const auto* base = static_cast<const std::byte*>(a.get());
  EXPECT_TRUE(pinned.isPinnedPtr(base));
  EXPECT_TRUE(pinned.isPinnedPtr(base + 1023));
  EXPECT_FALSE(pinned.isPinnedPtr(base + 1024));
  EXPECT_FALSE(pinned.isPinnedPtr(base - 1));
  EXPECT_FALSE(pinned.isPinnedPtr(nullptr));
  a.reset();
  EXPECT_TRUE(pinned.isPinnedPtr(base));  // cached, still pinned
  pinned.emptyCache();
  EXPECT_FALSE(pinned.isPinnedPtr(base));
  EXPECT_EQ(pinned.stats().reserved_bytes.current, 0);
  EXPECT_EQ(pinned.stats().num_device_free, 1);
}

TEST(PinnedCachingAllocator, OutOfPinnedMemoryFreesTheCacheThenThrows) {
  testing::FakeSegmentSource source(8192);
  PinnedCachingAllocator pinned(source);
  pinned.allocate(4096).reset();
  DataPtr big = pinned.allocate(8192);  // needs the cached 4 KiB back
  EXPECT_EQ(pinned.stats().num_alloc_retries, 1);
  EXPECT_THROW((void)pinned.allocate(512), OutOfMemory);
  EXPECT_EQ(pinned.stats().num_ooms, 1);
  DataPtr foreign;
  EXPECT_THROW(pinned.recordStream(foreign, stream(0)), InvalidArgument);
}

}  // namespace
}  // namespace accel::memory
