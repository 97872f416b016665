// The large pool's parked block (src/core/memory/device_cache/parked_block.h):
// a large block freed right after its cut, with nothing else changed in the
// large pool, is parked instead of merged, and taken back by the next
// request of its size on its stream. The rule is that nothing can tell:
// every placement, figure and history event is what merging at once gives,
// so each test here reads the large pool while a block is parked (or right
// after) and checks it sees the merged cache.
#include <gtest/gtest.h>

#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kMiB;
using testing::MiB;

using testing::stream;

class ParkedBlock : public ::testing::Test {
 protected:
  // A 4 MiB block cut from a free 20 MiB segment and freed: parked.
  void* cutAndFree() {
    allocator_.allocate(0, 6 * kMiB, stream(0)).reset();  // the segment, whole again
    DataPtr block = allocator_.allocate(0, 4 * kMiB, stream(0));
    void* const at = block.get();
    block.reset();
    return at;
  }

  FakeSegmentSource source_{std::size_t{1} << 30};
  CachingAllocator allocator_{DeviceType::CUDA, 1, source_};
};

TEST_F(ParkedBlock, PairsKeepTheFiguresOfMergingAtOnce) {
  void* const at = cutAndFree();
  for (int i = 0; i < 10; ++i) {
    DataPtr again = allocator_.allocate(0, 4 * kMiB - 100, stream(0));
    EXPECT_EQ(again.get(), at);
  }
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocations.allocated, 12);
  EXPECT_EQ(stats.allocations.current, 0);
  EXPECT_EQ(stats.allocated_bytes.allocated, 6 * MiB + 11 * 4 * MiB);
  EXPECT_EQ(stats.allocated_bytes.peak, 6 * MiB);
  EXPECT_EQ(stats.requested_bytes.allocated, 6 * MiB + 4 * MiB + 10 * (4 * MiB - 100));
  // Every cut left a rest (an inactive split) that its free merged back.
  EXPECT_EQ(stats.inactive_split.allocated, 12);
  EXPECT_EQ(stats.inactive_split.freed, 12);
  EXPECT_EQ(stats.inactive_split.current, 0);
  EXPECT_EQ(stats.inactive_split_bytes.allocated, 14 * MiB + 11 * 16 * MiB);
  EXPECT_EQ(stats.inactive_split_bytes.peak, 16 * MiB);
  EXPECT_EQ(stats.segments.current, 1);
  EXPECT_EQ(source_.allocations.load(), 1);
}

TEST_F(ParkedBlock, AnotherLargeRequestFindsTheMergedBlock) {
  void* const at = cutAndFree();
  // Best fit among merged blocks: the whole segment, cut at its start.
  DataPtr other = allocator_.allocate(0, 6 * kMiB, stream(0));
  EXPECT_EQ(other.get(), at);
  EXPECT_EQ(source_.allocations.load(), 1);
}

TEST_F(ParkedBlock, ARequestOnAnotherStreamDoesNotTakeIt) {
  void* const at = cutAndFree();
  DataPtr other = allocator_.allocate(0, 4 * kMiB, stream(1));
  EXPECT_NE(other.get(), at);
  EXPECT_EQ(source_.allocations.load(), 2);  // a segment of stream 1's
}

TEST_F(ParkedBlock, StatsSnapshotsAndLookupsSeeItFreeAndMerged) {
  void* const at = cutAndFree();
  EXPECT_FALSE(allocator_.findBlock(0, at).has_value());
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  ASSERT_EQ(snapshot.segments.size(), 1u);
  ASSERT_EQ(snapshot.segments[0].blocks.size(), 1u);
  EXPECT_EQ(snapshot.segments[0].blocks[0].size, 20 * kMiB);
  EXPECT_EQ(snapshot.segments[0].blocks[0].state, MemoryBlock::State::Free);
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.inactive_split.current, 0);
  EXPECT_EQ(stats.active_bytes.current, 0);
}

TEST_F(ParkedBlock, EmptyCacheGivesItsSegmentBack) {
  (void)cutAndFree();
  allocator_.emptyCache();
  EXPECT_EQ(allocator_.stats(0).reserved_bytes.current, 0);
  EXPECT_EQ(source_.used(), 0u);
}

TEST_F(ParkedBlock, ANeighbourFreedLaterMergesWithItAndItsRest) {
  allocator_.allocate(0, 6 * kMiB, stream(0)).reset();
  DataPtr first = allocator_.allocate(0, 4 * kMiB, stream(0));
  DataPtr second = allocator_.allocate(0, 4 * kMiB, stream(0));  // the last cut
  second.reset();                                                // parked
  first.reset();  // merges with the parked block and the rest: the whole segment
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.inactive_split.current, 0);
  EXPECT_EQ(stats.inactive_split_bytes.current, 0);
  allocator_.emptyCache();
  EXPECT_EQ(source_.used(), 0u);
}

TEST_F(ParkedBlock, ASmallRequestThatNeedsASegmentSeesItMerged) {
  FakeSegmentSource source(21 * kMiB);  // a large segment, or a small one beside it
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  allocator.allocate(0, 6 * kMiB, stream(0)).reset();
  allocator.allocate(0, 4 * kMiB, stream(0)).reset();  // parked
  // The 2 MiB segment does not fit beside the large one: the large segment,
  // whole once its parked block is merged, is given back first.
  DataPtr small = allocator.allocate(0, 4096, stream(0));
  EXPECT_TRUE(small);
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_device_free, 1);
  EXPECT_EQ(stats.num_ooms, 0);
  EXPECT_EQ(stats.reserved_bytes.current, 2 * MiB);
}

TEST_F(ParkedBlock, HistoryRecordsEachPairAsAllocFreeRequestedFreeCompleted) {
  allocator_.recordHistory({HistoryRecording::All, 100, false});
  void* const at = cutAndFree();
  DataPtr again = allocator_.allocate(0, 4 * kMiB, stream(0));
  again.reset();
  using Action = MemoryTraceEntry::Action;
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  std::vector<Action> actions;
  for (const MemoryTraceEntry& entry : snapshot.device_traces.at(0)) {
    actions.push_back(entry.action);
    if (entry.size == 4 * kMiB) {
      EXPECT_EQ(entry.address, reinterpret_cast<std::uintptr_t>(at));
    }
  }
  EXPECT_EQ(actions, (std::vector<Action>{
                         Action::SegmentAlloc, Action::Alloc, Action::FreeRequested,
                         Action::FreeCompleted, Action::Alloc, Action::FreeRequested,
                         Action::FreeCompleted, Action::Alloc, Action::FreeRequested,
                         Action::FreeCompleted, Action::Snapshot}));
}

}  // namespace
}  // namespace accel::memory
