// The caching allocator's lookups (deviceOf, findBlock) and BlockUses: what a
// backend's checks read instead of keeping a record of every allocation.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kMiB;

Stream streamOn(DeviceIndex device, StreamId id = 0) {
  return Stream(Device::unchecked(DeviceType::CUDA, device), id);
}

std::byte* at(const DataPtr& data, std::size_t offset) {
  return static_cast<std::byte*>(data.get()) + offset;
}

class DeviceLookupTest : public ::testing::Test {
 protected:
  FakeSegmentSource source_{std::size_t{1} << 30};
  CachingAllocator allocator_{DeviceType::CUDA, 2, source_};
};

TEST_F(DeviceLookupTest, FindBlockResolvesInteriorPointersOfLiveBlocksOnly) {
  DataPtr a = allocator_.allocate(1, 1000, streamOn(1, 3));
  const std::optional<BlockInfo> found = allocator_.findBlock(1, at(a, 999));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->base, a.get());
  EXPECT_EQ(found->requested, 1000u);
  EXPECT_EQ(found->size, 1024u);
  EXPECT_EQ(found->stream, streamOn(1, 3));
  EXPECT_FALSE(found->freed);
  // The rest of the segment is cached, not handed out: no block there.
  EXPECT_FALSE(allocator_.findBlock(1, at(a, 1024)).has_value());
  // Another device's cache does not know the address.
  EXPECT_FALSE(allocator_.findBlock(0, a.get()).has_value());
  void* address = a.get();
  a.reset();
  EXPECT_FALSE(allocator_.findBlock(1, address).has_value());
  EXPECT_THROW((void)allocator_.findBlock(2, address), InvalidArgument);
}

TEST_F(DeviceLookupTest, DeviceOfAnswersFromTheSegmentsCachedOrInUse) {
  DataPtr a = allocator_.allocate(1, 3 * kMiB, streamOn(1));
  void* inside = at(a, 3 * kMiB - 1);
  EXPECT_EQ(allocator_.deviceOf(inside), DeviceIndex{1});
  a.reset();
  EXPECT_EQ(allocator_.deviceOf(inside), DeviceIndex{1});  // cached, still its memory
  allocator_.emptyCache();
  EXPECT_FALSE(allocator_.deviceOf(inside).has_value());  // given back
  int on_stack = 0;
  EXPECT_FALSE(allocator_.deviceOf(&on_stack).has_value());
  EXPECT_FALSE(allocator_.deviceOf(nullptr).has_value());
}

TEST_F(DeviceLookupTest, BlockFreedWhileUsedStaysAllocatedUntilTheLastUseEnds) {
  DataPtr a = allocator_.allocate(0, 4096, streamOn(0));
  void* address = a.get();
  BlockUse first = allocator_.useBlock(0, at(a, 100));
  ASSERT_TRUE(first);
  EXPECT_EQ(first.info().base, address);
  BlockUse second = first;  // a copy counts
  a.reset();
  // Freed by its user but kept: allocated, visible as freed, not reusable.
  EXPECT_EQ(allocator_.stats(0).allocated_bytes.current, 4096);
  const std::optional<BlockInfo> kept = allocator_.findBlock(0, address);
  ASSERT_TRUE(kept.has_value());
  EXPECT_TRUE(kept->freed);
  EXPECT_FALSE(allocator_.useBlock(0, address)) << "a freed block gave a new use";
  DataPtr b = allocator_.allocate(0, 4096, streamOn(0));
  EXPECT_NE(b.get(), address) << "a block still in use was handed out again";
  first = BlockUse();
  EXPECT_EQ(allocator_.stats(0).allocated_bytes.current, 2 * 4096);
  second = BlockUse();
  // The last use did the free the DataPtr asked for.
  EXPECT_EQ(allocator_.stats(0).allocated_bytes.current, 4096);
  EXPECT_EQ(allocator_.stats(0).allocations.freed, 1);
  EXPECT_FALSE(allocator_.findBlock(0, address).has_value());
  DataPtr c = allocator_.allocate(0, 4096, streamOn(0));
  EXPECT_EQ(c.get(), address);  // and the block is reusable again
}

TEST_F(DeviceLookupTest, UseEndingBeforeTheFreeChangesNothing) {
  DataPtr a = allocator_.allocate(0, 700, streamOn(0));
  { BlockUse use = allocator_.useBlock(0, a.get()); }
  EXPECT_EQ(allocator_.stats(0).allocations.current, 1);
  void* address = a.get();
  a.reset();
  EXPECT_EQ(allocator_.stats(0).allocations.current, 0);
  EXPECT_FALSE(allocator_.useBlock(0, address));
}

TEST_F(DeviceLookupTest, UsesFromManyThreadsKeepTheBlockUntilTheLastEnds) {
  DataPtr a = allocator_.allocate(0, 64 << 10, streamOn(0));
  void* address = a.get();
  std::vector<BlockUse> uses;
  for (int i = 0; i < 8; ++i) uses.push_back(allocator_.useBlock(0, address));
  a.reset();
  std::vector<std::thread> threads;
  for (BlockUse& use : uses) {
    threads.emplace_back([&use] {
      for (int i = 0; i < 200; ++i) {
        BlockUse copy = use;  // count up and down while others do
      }
      use = BlockUse();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(allocator_.stats(0).allocations.current, 0);
  EXPECT_EQ(allocator_.stats(0).allocated_bytes.current, 0);
}

TEST_F(DeviceLookupTest, BlockDeleterIsTheDeleterOfItsDataPtrs) {
  DataPtr a = allocator_.allocate(0, 10, streamOn(0));
  EXPECT_EQ(a.deleter(), CachingAllocator::blockDeleter());
}

}  // namespace
}  // namespace accel::memory
