#include "accel/memory/caching_allocator.h"
#include "accel/memory/record_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "accel/error.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kKiB;
using testing::kMiB;
using testing::MiB;

using testing::stream;

// Every flat stat must equal `expected` (absent: 0): the whole of MemoryStats
// is compared, not a chosen few fields.
void expectExactly(const MemoryStats& stats,
                   const std::map<std::string, std::int64_t>& expected) {
  const auto flat = stats.flatten();
  for (const auto& [name, value] : expected) {
    EXPECT_TRUE(flat.count(name)) << "no stat named " << name;
  }
  for (const auto& [name, value] : flat) {
    auto found = expected.find(name);
    EXPECT_EQ(value, found == expected.end() ? 0 : found->second) << name;
  }
}

// cur/peak/allocated/freed of one stat.
void put(std::map<std::string, std::int64_t>& out, const std::string& name,
         std::int64_t current, std::int64_t peak, std::int64_t allocated,
         std::int64_t freed) {
  out[name + ".current"] = current;
  out[name + ".peak"] = peak;
  out[name + ".allocated"] = allocated;
  out[name + ".freed"] = freed;
}

class CachingAllocatorTest : public ::testing::Test {
 protected:
  FakeSegmentSource source_{std::size_t{1} << 30};
  CachingAllocator allocator_{DeviceType::CUDA, 1, source_};
};

TEST_F(CachingAllocatorTest, StatsAreExactAfterAScriptedSequence) {
  DataPtr a = allocator_.allocate(0, 1000, stream(0));
  DataPtr b = allocator_.allocate(0, 3 * kMiB, stream(0));
  a.reset();
  allocator_.emptyCache();
  b.reset();

  std::map<std::string, std::int64_t> e;
  put(e, "allocation.small_pool", 0, 1, 1, 1);
  put(e, "allocation.large_pool", 0, 1, 1, 1);
  put(e, "allocation.all", 0, 2, 2, 2);
  put(e, "segment.small_pool", 0, 1, 1, 1);
  put(e, "segment.large_pool", 1, 1, 1, 0);
  put(e, "segment.all", 1, 2, 2, 1);
  put(e, "active.small_pool", 0, 1, 1, 1);
  put(e, "active.large_pool", 0, 1, 1, 1);
  put(e, "active.all", 0, 2, 2, 2);
  put(e, "inactive_split.small_pool", 0, 1, 1, 1);
  put(e, "inactive_split.large_pool", 0, 1, 1, 1);
  put(e, "inactive_split.all", 0, 2, 2, 2);
  put(e, "allocated_bytes.small_pool", 0, 1024, 1024, 1024);
  put(e, "allocated_bytes.large_pool", 0, 3 * MiB, 3 * MiB, 3 * MiB);
  put(e, "allocated_bytes.all", 0, 3 * MiB + 1024, 3 * MiB + 1024, 3 * MiB + 1024);
  put(e, "reserved_bytes.small_pool", 0, 2 * MiB, 2 * MiB, 2 * MiB);
  put(e, "reserved_bytes.large_pool", 20 * MiB, 20 * MiB, 20 * MiB, 0);
  put(e, "reserved_bytes.all", 20 * MiB, 22 * MiB, 22 * MiB, 2 * MiB);
  put(e, "active_bytes.small_pool", 0, 1024, 1024, 1024);
  put(e, "active_bytes.large_pool", 0, 3 * MiB, 3 * MiB, 3 * MiB);
  put(e, "active_bytes.all", 0, 3 * MiB + 1024, 3 * MiB + 1024, 3 * MiB + 1024);
  const std::int64_t small_rest = 2 * MiB - 1024;
  const std::int64_t large_rest = 17 * MiB;
  put(e, "inactive_split_bytes.small_pool", 0, small_rest, small_rest, small_rest);
  put(e, "inactive_split_bytes.large_pool", 0, large_rest, large_rest, large_rest);
  put(e, "inactive_split_bytes.all", 0, small_rest + large_rest, small_rest + large_rest,
      small_rest + large_rest);
  put(e, "requested_bytes.small_pool", 0, 1000, 1000, 1000);
  put(e, "requested_bytes.large_pool", 0, 3 * MiB, 3 * MiB, 3 * MiB);
  put(e, "requested_bytes.all", 0, 3 * MiB + 1000, 3 * MiB + 1000, 3 * MiB + 1000);
  e["num_device_alloc"] = 2;
  e["num_device_free"] = 1;
  expectExactly(allocator_.stats(0), e);
  EXPECT_EQ(source_.used(), 20 * kMiB);

  allocator_.resetPeakStats(0);
  const MemoryStats reset = allocator_.stats(0);
  EXPECT_EQ(reset.reserved_bytes.peak, 20 * MiB);
  EXPECT_EQ(reset.allocated_bytes.peak, 0);
  EXPECT_EQ(reset.allocated_bytes.allocated, 3 * MiB + 1024);  // cumulative stays
}

TEST_F(CachingAllocatorTest, FreedBlockIsReusedBestFitAndSplit) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  DataPtr b = allocator_.allocate(0, 8 * kKiB, stream(0));
  DataPtr c = allocator_.allocate(0, 4 * kKiB, stream(0));
  DataPtr d = allocator_.allocate(0, 2 * kKiB, stream(0));
  void* const b_address = b.get();
  void* const d_address = d.get();
  // Same segment, address order, 512 B quantum.
  EXPECT_EQ(static_cast<std::byte*>(b.get()),
            static_cast<std::byte*>(a.get()) + 4 * kKiB);
  b.reset();
  d.reset();  // merges with the free rest of the segment
  // 6 KiB fits the 8 KiB hole better than the ~2 MiB rest: best fit.
  DataPtr e = allocator_.allocate(0, 6 * kKiB, stream(0));
  EXPECT_EQ(e.get(), b_address);
  // The 2 KiB left of the hole serves a 2 KiB request.
  DataPtr f = allocator_.allocate(0, 2 * kKiB, stream(0));
  EXPECT_EQ(static_cast<std::byte*>(f.get()),
            static_cast<std::byte*>(b_address) + 6 * kKiB);
  DataPtr g = allocator_.allocate(0, 1024, stream(0));
  EXPECT_EQ(g.get(), d_address);
  EXPECT_EQ(source_.allocations.load(), 1);
  // A 512 B request has a pool of its own (a uniform pool): its own segment.
  DataPtr h = allocator_.allocate(0, 512, stream(0));
  EXPECT_EQ(source_.allocations.load(), 2);
  EXPECT_EQ(allocator_.stats(0).segments.current, 2);
}

// A split or a merge changes a free block's size in place (no re-insertion
// when its rank holds). Here both move a block past another one, so a wrong
// order would make best fit pick the larger block.
TEST_F(CachingAllocatorTest, BestFitHoldsWhenSplitsAndMergesReorderTheFreeBlocks) {
  auto allocate = [&](std::size_t bytes) {
    return allocator_.allocate(0, bytes, stream(0));
  };
  // One 2 MiB segment: [a 100K][guard 4K][b 200K][guard 4K][rest].
  DataPtr a = allocate(100 * kKiB);
  DataPtr guard_ab = allocate(4 * kKiB);
  DataPtr b = allocate(200 * kKiB);
  DataPtr guard_rest = allocate(4 * kKiB);
  auto* const base = static_cast<std::byte*>(a.get());
  a.reset();  // free: 100K at 0 and 200K at 104K
  b.reset();
  // 120K takes the 200K block; its 80K rest now ranks before the 100K one.
  DataPtr c = allocate(120 * kKiB);
  EXPECT_EQ(c.get(), base + 104 * kKiB);
  // 90K: the 80K rest is too small, the 100K block fits best.
  DataPtr d = allocate(90 * kKiB);
  EXPECT_EQ(d.get(), base);
  // Freeing d merges it into its 10K rest: 100K, now ranked after the 80K.
  d.reset();
  DataPtr e = allocate(75 * kKiB);
  EXPECT_EQ(e.get(), base + 224 * kKiB);
  DataPtr f = allocate(95 * kKiB);
  EXPECT_EQ(f.get(), base);
  // Free: 5K after f, 5K after e, and the rest of the segment.
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.inactive_split.current, 3);
  EXPECT_EQ(stats.inactive_split_bytes.current,
            static_cast<std::int64_t>(2 * kMiB - 308 * kKiB + 10 * kKiB));
  EXPECT_EQ(source_.allocations.load(), 1);
}

TEST_F(CachingAllocatorTest, FreeNeighboursMergeSoTheSegmentCanBeReturned) {
  std::vector<DataPtr> blocks;
  for (int i = 0; i < 16; ++i)
    blocks.push_back(allocator_.allocate(0, 64 * kKiB, stream(0)));
  for (std::size_t i = 0; i < blocks.size(); i += 2) blocks[i].reset();
  MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.inactive_split.current, 9);  // 8 holes and the rest
  // A request larger than every hole cannot use them: fragmentation.
  DataPtr big = allocator_.allocate(0, 1 * kMiB, stream(0));
  EXPECT_EQ(allocator_.stats(0).segments.current, 1);  // it fits the rest
  big.reset();
  for (DataPtr& block : blocks) block.reset();
  stats = allocator_.stats(0);
  EXPECT_EQ(stats.inactive_split.current, 0);
  EXPECT_EQ(stats.inactive_split_bytes.current, 0);
  allocator_.emptyCache();
  EXPECT_EQ(allocator_.stats(0).reserved_bytes.current, 0);
  EXPECT_EQ(source_.used(), 0u);
}

TEST_F(CachingAllocatorTest, BlocksAreNotSharedAcrossStreamsWhileMemoryIsPlentiful) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  void* const address = a.get();
  a.reset();
  // a is held for reuse on stream 0 (same size): stream 1 gets a segment of
  // its own all the same.
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(1));
  EXPECT_NE(b.get(), address);
  EXPECT_EQ(source_.allocations.load(), 2);
  DataPtr c = allocator_.allocate(0, 4 * kKiB, stream(0));
  EXPECT_EQ(c.get(), address);
}

TEST_F(CachingAllocatorTest, ZeroBytesGiveAnEmptyDataPtrAndBadInputIsRefused) {
  DataPtr empty = allocator_.allocate(0, 0, stream(0));
  EXPECT_FALSE(empty);
  EXPECT_EQ(empty.device(), Device::unchecked(DeviceType::CUDA, 0));
  EXPECT_THROW((void)allocator_.allocate(1, 16, stream(0)), InvalidArgument);
  EXPECT_THROW(
      (void)allocator_.allocate(0, 16, Stream(Device::unchecked(DeviceType::CUDA, 1), 0)),
      InvalidArgument);
  DataPtr foreign(reinterpret_cast<void*>(0x1000), nullptr, nullptr,
                  Device::unchecked(DeviceType::CUDA, 0));
  EXPECT_FALSE(allocator_.owns(foreign));
  EXPECT_THROW(allocator_.recordStream(foreign, stream(1)), InvalidArgument);
}

class StreamReuseTest : public ::testing::Test {
 protected:
  FakeSegmentSource source_{std::size_t{1} << 30, /*events=*/true};
  CachingAllocator allocator_{DeviceType::CUDA, 1, source_};
};

TEST_F(StreamReuseTest, BlockUsedOnAnotherStreamWaitsForItsEvent) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  void* const address = a.get();
  allocator_.recordStream(a, stream(7));
  allocator_.recordStream(a, stream(0));  // its own stream: nothing to wait for
  a.reset();
  ASSERT_EQ(source_.recorded_on, std::vector<StreamId>{7});
  MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.active_bytes.current, 4 * 1024);  // still in use by stream 7
  MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  ASSERT_EQ(snapshot.segments.size(), 1u);
  EXPECT_EQ(snapshot.segments[0].blocks[0].state, MemoryBlock::State::ActivePendingFree);

  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(0));
  EXPECT_NE(b.get(), address);  // not reused while stream 7 may use it
  source_.completeAll();
  DataPtr c = allocator_.allocate(0, 4 * kKiB, stream(0));
  EXPECT_EQ(c.get(), address);  // reused once the event completed
  EXPECT_EQ(source_.released_events.load(), 1);
  stats = allocator_.stats(0);
  EXPECT_EQ(stats.active_bytes.current, 8 * 1024);
}

TEST_F(StreamReuseTest, RecordStreamUseFromTheDataPtrAloneHoldsTheBlockAsWell) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  void* const address = a.get();
  EXPECT_TRUE(accel::memory::recordStreamUse(a, stream(7)));
  EXPECT_THROW((void)accel::memory::recordStreamUse(
                   a, Stream(Device::unchecked(DeviceType::CUDA, 1), 7)),
               InvalidArgument);  // a stream of another device
  a.reset();
  ASSERT_EQ(source_.recorded_on, std::vector<StreamId>{7});
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(0));
  EXPECT_NE(b.get(), address);
  source_.completeAll();
  EXPECT_EQ(allocator_.allocate(0, 4 * kKiB, stream(0)).get(), address);

  DataPtr foreign(reinterpret_cast<void*>(0x1000), nullptr, nullptr,
                  Device::unchecked(DeviceType::CUDA, 0));
  EXPECT_FALSE(accel::memory::recordStreamUse(foreign, stream(7)));
}

TEST_F(StreamReuseTest, EmptyCacheWaitsForPendingFrees) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  allocator_.recordStream(a, stream(3));
  a.reset();
  allocator_.emptyCache();
  EXPECT_EQ(source_.synchronized_events.load(), 1);
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.num_sync_all_streams, 1);
  EXPECT_EQ(stats.reserved_bytes.current, 0);
  EXPECT_EQ(stats.active_bytes.current, 0);
}

TEST(CrossStreamHandOff, FreeSegmentOfOneStreamIsGivenToAnotherByEvent) {
  FakeSegmentSource source(20 * kMiB, /*events=*/true);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  DataPtr a = allocator.allocate(0, 5 * kMiB, stream(0));
  void* const address = a.get();
  a.reset();
  // The device has no room for a second segment: instead of stranding the
  // cached one on stream 0, stream 2 waits on stream 0's event and takes it.
  DataPtr b = allocator.allocate(0, 5 * kMiB, stream(2));
  EXPECT_EQ(b.get(), address);
  ASSERT_EQ(source.waits.size(), 1u);
  EXPECT_EQ(source.waits[0].first, 2);
  EXPECT_EQ(source.recorded_on, std::vector<StreamId>{0});
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_device_alloc, 1);
  EXPECT_EQ(stats.num_alloc_retries, 0);
  EXPECT_EQ(stats.num_ooms, 0);
  MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  EXPECT_EQ(snapshot.segments.at(0).stream.id, 2);
}

TEST(OutOfMemory, CachedMemoryIsFreedAndTheAllocationRetried) {
  FakeSegmentSource source(40 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  allocator.allocate(0, 15 * kMiB, stream(0)).reset();  // 16 MiB cached
  DataPtr big = allocator.allocate(0, 30 * kMiB, stream(0));
  EXPECT_TRUE(big);
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_alloc_retries, 1);
  EXPECT_EQ(stats.num_device_free, 1);
  EXPECT_EQ(stats.reserved_bytes.current, 30 * MiB);
}

TEST(OutOfMemory, OversizeCachedBlocksAreFreedFirst) {
  FakeSegmentSource source(64 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source,
                             parseAllocatorSettings("max_split_size_mb:20"));
  allocator.allocate(0, 2 * kKiB, stream(0)).reset();   // small segment cached
  allocator.allocate(0, 30 * kMiB, stream(0)).reset();  // oversize segment cached
  MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.oversize_segments.current, 1);
  EXPECT_EQ(stats.oversize_allocations.allocated, 1);
  DataPtr big = allocator.allocate(0, 40 * kMiB, stream(0));
  stats = allocator.stats(0);
  EXPECT_EQ(stats.num_device_free, 1);
  EXPECT_EQ(stats.reserved_bytes.small_pool.current, 2 * MiB);  // small cache kept
  EXPECT_EQ(stats.oversize_segments.current, 1);
  EXPECT_EQ(stats.max_split_size, 20 * MiB);
}

TEST(OutOfMemory, ObserversSeeTheFactsOnceWithoutTheLockThenTheErrorGivesThem) {
  FakeSegmentSource source(40 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  DataPtr held = allocator.allocate(0, 30 * kMiB, stream(0));
  std::vector<OutOfMemoryEvent> seen;
  MemoryStats seen_stats;
  allocator.attachOutOfMemoryObserver([&](const OutOfMemoryEvent& event) {
    seen.push_back(event);
    seen_stats = allocator.stats(0);  // would deadlock if the lock were held
  });
  allocator.attachOutOfMemoryObserver([](const OutOfMemoryEvent&) { throw 1; });
  try {
    (void)allocator.allocate(0, 20 * kMiB, stream(0));
    FAIL() << "no OutOfMemory";
  } catch (const OutOfMemory& error) {
    const std::string message = error.message();
    for (const char* part :
         {"cuda:0 is out of memory", "20.00 MiB (20971520 bytes)", "Capacity: 40.00 MiB",
          "free: 10.00 MiB", "allocated: 30.00 MiB", "reserved but unallocated: 0 B",
          "in private pools: 0 B", "fragmentation: 0%"}) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
    }
    // Nothing is fragmented, so no setting is suggested.
    EXPECT_EQ(message.find("ACCEL_ALLOC_CONF"), std::string::npos) << message;
  }
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].requested_bytes, 20 * kMiB);
  EXPECT_EQ(seen[0].device_total_bytes, 40 * kMiB);
  EXPECT_EQ(seen[0].device_free_bytes, 10 * kMiB);
  EXPECT_EQ(seen[0].allocated_bytes, 30 * kMiB);
  EXPECT_EQ(seen[0].reserved_bytes, 30 * kMiB);
  EXPECT_EQ(seen[0].reserved_unallocated_bytes, 0u);
  EXPECT_EQ(seen_stats.num_ooms, 1);
  EXPECT_EQ(allocator.stats(0).num_ooms, 1);
}

TEST(OutOfMemory, FailAsOutOfMemoryTakesTheWholeOomPathEvenWhenTheCacheWouldServe) {
  FakeSegmentSource source(40 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  DataPtr held = allocator.allocate(0, 1000, stream(0));
  allocator.allocate(0, 5 * kMiB, stream(0)).reset();  // a 20 MiB segment cached
  int observed = 0;
  allocator.attachOutOfMemoryObserver([&](const OutOfMemoryEvent& event) {
    ++observed;
    EXPECT_EQ(event.requested_bytes, 1024u);
    EXPECT_EQ(event.allocated_bytes, 1024u);
  });
  try {
    allocator.failAsOutOfMemory(0, 1000, stream(0));
  } catch (const OutOfMemory& error) {
    const std::string message = error.message();
    EXPECT_NE(message.find("cuda:0 is out of memory"), std::string::npos) << message;
    EXPECT_NE(message.find("Capacity: 40.00 MiB"), std::string::npos) << message;
  }
  EXPECT_EQ(observed, 1);
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_ooms, 1);
  EXPECT_EQ(stats.num_alloc_retries, 1);
  EXPECT_EQ(stats.num_device_free, 1);               // the unused large segment went back
  EXPECT_EQ(stats.reserved_bytes.current, 2 * MiB);  // held's small segment stays
  EXPECT_EQ(stats.allocations.current, 1);
  EXPECT_THROW(allocator.failAsOutOfMemory(3, 1, stream(0)), InvalidArgument);
  EXPECT_THROW(allocator.failAsOutOfMemory(
                   0, 1, Stream(Device::unchecked(DeviceType::CUDA, 1), 0)),
               InvalidArgument);
}

TEST(OutOfMemory, FragmentedCacheSuggestsMaxSplitSizeOnlyWhenItIsOff) {
  for (const char* conf : {"", "max_split_size_mb:20"}) {
    FakeSegmentSource source(24 * kMiB);
    CachingAllocator allocator(DeviceType::CUDA, 1, source, parseAllocatorSettings(conf));
    DataPtr a = allocator.allocate(0, 2 * kMiB, stream(0));  // 20 MiB segment
    DataPtr b = allocator.allocate(0, 8 * kMiB, stream(0));
    a.reset();  // 2 MiB hole, 10 MiB rest: 12 MiB free but split
    try {
      (void)allocator.allocate(0, 12 * kMiB, stream(0));
      FAIL() << "no OutOfMemory";
    } catch (const OutOfMemory& error) {
      const bool suggested =
          error.message().find("max_split_size_mb") != std::string::npos;
      EXPECT_EQ(suggested, std::string(conf).empty()) << error.message();
      EXPECT_NE(error.message().find("fragmentation: 17%"), std::string::npos)
          << error.message();
    }
  }
}

TEST(MemoryLimit, CapsReservedBytesAndFractionUsesCapacity) {
  FakeSegmentSource source(100 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  allocator.setMemoryLimit(0, 4 * kMiB);
  DataPtr small = allocator.allocate(0, 1 * kMiB, stream(0));  // 2 MiB segment
  try {
    (void)allocator.allocate(0, 3 * kMiB, stream(0));  // would need 20 MiB
    FAIL() << "no OutOfMemory";
  } catch (const OutOfMemory& error) {
    EXPECT_NE(error.message().find("the allocator's limit"), std::string::npos);
  }
  allocator.setMemoryFraction(0, 0.5);
  DataPtr mid = allocator.allocate(0, 3 * kMiB, stream(0));
  EXPECT_THROW((void)allocator.allocate(0, 30 * kMiB, stream(0)), OutOfMemory);
  EXPECT_THROW(allocator.setMemoryFraction(0, 1.5), InvalidArgument);
}

TEST(GarbageCollection, FreesLargestUnusedSegmentsAboveTheThreshold) {
  FakeSegmentSource source(100 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source,
                             parseAllocatorSettings("garbage_collection_threshold:0.5"));
  for (StreamId s = 0; s < 4; ++s) allocator.allocate(0, 16 * kMiB, stream(s)).reset();
  EXPECT_EQ(allocator.stats(0).reserved_bytes.current, 64 * MiB);  // 48 <= 50 at the 4th
  DataPtr next = allocator.allocate(0, 20 * kMiB, stream(0));
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_device_free, 1);  // 64 -> 48 MiB, below half of 100 MiB
  EXPECT_EQ(stats.reserved_bytes.current, 68 * MiB);
  EXPECT_EQ(stats.num_alloc_retries, 0);
}

// A free whose event recording fails part way keeps the block out of the
// cache even after the events that were recorded complete.
TEST_F(StreamReuseTest, BlockWhoseEventCouldNotBeRecordedStaysOutOfTheCache) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  void* const address = a.get();
  allocator_.recordStream(a, stream(1));
  allocator_.recordStream(a, stream(2));
  source_.event_records_left = 1;  // stream 1's event is recorded, stream 2's fails
  a.reset();
  source_.completeAll();
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(0));
  EXPECT_NE(b.get(), address);
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 4 * 1024);
  EXPECT_EQ(stats.active_bytes.current, 8 * 1024);  // the lost block stays active
}

// Reuse lists: a freed block is held whole for the next request of its size
// on its stream; anything else sees it merged into the free set.
TEST_F(CachingAllocatorTest, SameSizeOnTheSameStreamGetsTheFreedBlockBack) {
  DataPtr a = allocator_.allocate(0, 3000, stream(0));  // 3072 B
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(0));
  void* const address = a.get();
  a.reset();
  DataPtr c = allocator_.allocate(0, 2600, stream(0));  // also 3072 B
  EXPECT_EQ(c.get(), address);
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 3072 + 4096);
  EXPECT_EQ(stats.allocated_bytes.allocated, 2 * 3072 + 4096);
  EXPECT_EQ(stats.allocated_bytes.freed, 3072);
  EXPECT_EQ(stats.allocated_bytes.peak, 3072 + 4096);
  EXPECT_EQ(stats.requested_bytes.current, 2600 + 4096);
  EXPECT_EQ(stats.active.current, 2);
  EXPECT_EQ(stats.inactive_split.current, 1);  // the rest of the segment
  EXPECT_EQ(stats.inactive_split_bytes.current, 2 * MiB - 3072 - 4096);
  EXPECT_EQ(source_.allocations.load(), 1);
}

TEST_F(CachingAllocatorTest, StatsAndSnapshotsSeeHeldBlocksMerged) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  a.reset();
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.active.current, 0);
  EXPECT_EQ(stats.inactive_split.current, 0);  // the segment is whole again
  EXPECT_EQ(stats.inactive_split_bytes.current, 0);
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(0));
  b.reset();
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  ASSERT_EQ(snapshot.segments.size(), 1u);
  ASSERT_EQ(snapshot.segments[0].blocks.size(), 1u);
  EXPECT_EQ(snapshot.segments[0].blocks[0].size, 2 * kMiB);
  EXPECT_EQ(snapshot.segments[0].blocks[0].state, MemoryBlock::State::Free);
}

TEST_F(CachingAllocatorTest, ARequestOfAnotherSizeSeesHeldBlocksMergedForBestFit) {
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream(0));
  DataPtr guard = allocator_.allocate(0, 512, stream(0));
  void* const address = a.get();
  a.reset();
  b.reset();
  // Held apart, neither 4 KiB block could serve 8 KiB and the request would
  // split the rest of the segment; merged they form the best fit.
  DataPtr c = allocator_.allocate(0, 8 * kKiB, stream(0));
  EXPECT_EQ(c.get(), address);
}

// Large-pool blocks are never held (docs/design-notes.md, "Large blocks are
// not held"): freed, they merge at once, so the next 4 MiB request is the
// best fit at the start of the merged segment. Held, the block freed last
// (b) would have been handed back.
TEST_F(CachingAllocatorTest, ALargeBlockFreedMergesAtOnce) {
  DataPtr a = allocator_.allocate(0, 4 * kMiB, stream(0));
  DataPtr b = allocator_.allocate(0, 4 * kMiB, stream(0));
  void* const start = a.get();
  ASSERT_EQ(static_cast<std::byte*>(b.get()), static_cast<std::byte*>(start) + 4 * kMiB);
  a.reset();
  b.reset();
  DataPtr c = allocator_.allocate(0, 4 * kMiB, stream(0));
  EXPECT_EQ(c.get(), start);
  c.reset();
  EXPECT_EQ(source_.allocations.load(), 1);
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.inactive_split.current, 0);  // the segment is whole again
}

// 512 B blocks have a pool of their own (a uniform pool, size_rules.h): a
// miss of the small pool returns the other held blocks to be merged, but not
// these, which no merge can help. Held, the block freed last (x3) serves the
// next 512 B request; returned, best fit would pick the 512 B hole at x1.
TEST_F(CachingAllocatorTest, UniformPoolBlocksStayHeldAcrossASmallPoolMiss) {
  DataPtr x1 = allocator_.allocate(0, 512, stream(0));
  DataPtr x2 = allocator_.allocate(0, 512, stream(0));
  DataPtr x3 = allocator_.allocate(0, 512, stream(0));
  void* const third = x3.get();
  ASSERT_EQ(static_cast<std::byte*>(third), static_cast<std::byte*>(x1.get()) + 1024);
  // The small pool's segment; 8 KiB so that the peak stays above what
  // follows (a peak that may rise is measured from exact figures, which
  // leaves a cache's held blocks unserved until it frees again).
  DataPtr k = allocator_.allocate(0, 8 * kKiB, stream(0));
  EXPECT_EQ(source_.allocations.load(), 2);
  x1.reset();
  x3.reset();
  k.reset();
  DataPtr miss = allocator_.allocate(0, 6 * kKiB, stream(0));  // a small-pool miss
  DataPtr again = allocator_.allocate(0, 300, stream(0));
  EXPECT_EQ(again.get(), third);
  EXPECT_EQ(source_.allocations.load(), 2);
  // The figures stay exact: x2 and `again` (512 B each) and the 6 KiB block.
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 2 * 512 + 6 * 1024);
  EXPECT_EQ(stats.requested_bytes.current, 512 + 300 + 6 * 1024);
  EXPECT_EQ(stats.allocations.current, 3);
  EXPECT_EQ(stats.allocated_bytes.peak, 3 * 512 + 8 * 1024);
}

// A small-pool miss returns the held blocks of its own stream only: another
// stream's could neither serve it nor merge with its blocks (each segment is
// one stream's). Held, the block freed last (y3) serves stream 1's next
// 64 KiB request; returned, best fit would pick the 64 KiB hole at y1. With
// and without thread caches (the device's own reuse lists).
TEST(StreamReuse, ASmallPoolMissLeavesOtherStreamsHeldBlocksHeld) {
  for (const char* settings : {"", "thread_caches:false"}) {
    SCOPED_TRACE(settings);
    FakeSegmentSource source(std::size_t{1} << 30);
    CachingAllocator allocator(DeviceType::CUDA, 1, source,
                               parseAllocatorSettings(settings));
    DataPtr y1 = allocator.allocate(0, 64 * kKiB, stream(1));
    DataPtr y2 = allocator.allocate(0, 64 * kKiB, stream(1));
    DataPtr y3 = allocator.allocate(0, 64 * kKiB, stream(1));
    void* const third = y3.get();
    ASSERT_EQ(static_cast<std::byte*>(third),
              static_cast<std::byte*>(y1.get()) + 128 * kKiB);
    DataPtr k = allocator.allocate(0, 256 * kKiB, stream(2));  // stream 2's segment
    ASSERT_EQ(source.allocations.load(), 2);
    y1.reset();
    y3.reset();
    k.reset();
    DataPtr miss = allocator.allocate(0, 128 * kKiB, stream(2));  // a miss on stream 2
    DataPtr again = allocator.allocate(0, 64 * kKiB, stream(1));
    EXPECT_EQ(again.get(), third);
    EXPECT_EQ(source.allocations.load(), 2);
    const MemoryStats stats = allocator.stats(0);
    EXPECT_EQ(stats.allocated_bytes.current, 2 * 64 * 1024 + 128 * 1024);
    EXPECT_EQ(stats.allocations.current, 3);
  }
}

// Requests rotating over 64 streams, one size: each stream's freed block is
// held for it (their reuse lists are 64 different ones, and one stream's
// miss returns no other's), so after one round that cuts each stream's block
// from its segment, nothing is cut again.
TEST(StreamReuse, RequestsRotatingOverSixtyFourStreamsKeepTheirHeldBlocks) {
  for (const char* settings : {"", "thread_caches:false"}) {
    SCOPED_TRACE(settings);
    FakeSegmentSource source(std::size_t{1} << 30);
    CachingAllocator allocator(DeviceType::CUDA, 1, source,
                               parseAllocatorSettings(settings));
    constexpr StreamId kStreams = 64;
    for (StreamId id = 0; id < kStreams; ++id)
      allocator.allocate(0, 64 * kKiB, stream(id)).reset();
    const MemoryStats before = allocator.stats(0);  // every block merged back
    for (int round = 0; round < 3; ++round) {
      for (StreamId id = 0; id < kStreams; ++id)
        allocator.allocate(0, 64 * kKiB, stream(id)).reset();
    }
    const MemoryStats after = allocator.stats(0);
    EXPECT_EQ(after.inactive_split.allocated - before.inactive_split.allocated, kStreams)
        << "splits in three rounds";
    EXPECT_EQ(after.allocations.allocated - before.allocations.allocated, 3 * kStreams);
    EXPECT_EQ(after.segments.current, kStreams);
  }
}

// A full uniform pool takes back the blocks held for it before it grows: a
// cache may hold blocks it cannot serve (freed with fewer requested bytes
// than the next requests ask, LocalBlockFigures), and those must not cost a
// segment.
TEST_F(CachingAllocatorTest, AFullUniformPoolTakesBackItsHeldBlocksBeforeGrowing) {
  constexpr std::size_t kPerSegment = 2 * kMiB / 512;  // one small segment
  std::vector<DataPtr> blocks;
  for (std::size_t i = 0; i < kPerSegment; ++i)
    blocks.push_back(allocator_.allocate(0, 1, stream(0)));
  ASSERT_EQ(source_.allocations.load(), 1);
  for (std::size_t i = 0; i < 32; ++i) blocks[i].reset();  // 1 requested byte each
  for (std::size_t i = 0; i < 32; ++i) blocks[i] = allocator_.allocate(0, 500, stream(0));
  EXPECT_EQ(source_.allocations.load(), 1);
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 2 * MiB);
  EXPECT_EQ(stats.requested_bytes.current,
            static_cast<std::int64_t>(kPerSegment - 32 + 32 * 500));
  EXPECT_EQ(stats.segments.current, 1);
}

TEST_F(CachingAllocatorTest, EmptyCacheGivesBackTheSegmentsOfHeldBlocks) {
  allocator_.allocate(0, 4 * kKiB, stream(0)).reset();
  allocator_.allocate(0, 3 * kMiB, stream(0)).reset();
  allocator_.emptyCache();
  const MemoryStats stats = allocator_.stats(0);
  EXPECT_EQ(stats.reserved_bytes.current, 0);
  EXPECT_EQ(stats.num_device_free, 2);
  EXPECT_EQ(source_.used(), 0u);
}

TEST(OutOfMemory, HeldBlocksAreMergedAndTheirSegmentFreedBeforeTheDeviceIsFull) {
  FakeSegmentSource source(21 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  DataPtr a = allocator.allocate(0, kMiB, stream(0));
  DataPtr b = allocator.allocate(0, kMiB, stream(0));  // the 2 MiB segment is full
  a.reset();
  b.reset();
  // 20 MiB more do not fit next to the small segment: it must be whole, and
  // so given back, although its two blocks were held for reuse.
  DataPtr big = allocator.allocate(0, 19 * kMiB, stream(0));
  EXPECT_TRUE(big);
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.num_device_free, 1);
  EXPECT_EQ(stats.num_ooms, 0);
  EXPECT_EQ(stats.reserved_bytes.current, 20 * MiB);
}

TEST(PrivatePools, SharedByTwoGraphsAndReleasedWithTheLastUser) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const MempoolId pool = allocator.createPool();
  EXPECT_FALSE(pool.isDefault());
  EXPECT_NE(allocator.createPool(), pool);
  allocator.retainPool(0, pool);  // graph 1
  allocator.retainPool(0, pool);  // graph 2 shares it
  allocator.beginAllocateToPool(0, pool, stream(5));
  DataPtr in_pool = allocator.allocate(0, 4 * kKiB, stream(5));
  allocator.endAllocateToPool(0, pool, stream(5));
  DataPtr outside = allocator.allocate(0, 4 * kKiB, stream(5));
  MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  ASSERT_EQ(snapshot.segments.size(), 2u);
  int private_segments = 0;
  for (const MemorySegment& segment : snapshot.segments) {
    if (segment.pool == pool) ++private_segments;
  }
  EXPECT_EQ(private_segments, 1);

  // Graph 2 captures into the same pool and reuses what graph 1 freed.
  void* const address = in_pool.get();
  in_pool.reset();
  allocator.emptyCache();  // the pool is in use: its memory stays
  EXPECT_EQ(allocator.stats(0).segments.current, 1 + 1);
  allocator.beginAllocateToPool(0, pool, stream(5));
  DataPtr again = allocator.allocate(0, 4 * kKiB, stream(5));
  allocator.endAllocateToPool(0, pool, stream(5));
  EXPECT_EQ(again.get(), address);

  allocator.releasePool(0, pool);  // graph 1 goes
  again.reset();
  EXPECT_EQ(allocator.stats(0).segments.current, 2);
  allocator.releasePool(0, pool);  // graph 2 goes: the pool's memory returns
  EXPECT_EQ(allocator.stats(0).segments.current, 1);
  EXPECT_THROW(allocator.releasePool(0, pool), InvalidArgument);
  EXPECT_THROW(allocator.beginAllocateToPool(0, pool, stream(5)), InvalidArgument);
}

TEST(PrivatePools, EndingOneStreamsCaptureLeavesTheOtherStreamAllocatingToThePool) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const MempoolId pool = allocator.createPool();
  allocator.retainPool(0, pool);
  allocator.retainPool(0, pool);
  allocator.beginAllocateToPool(0, pool, stream(5));
  allocator.beginAllocateToPool(0, pool, stream(6));
  allocator.endAllocateToPool(0, pool, stream(5));
  DataPtr still_in_pool = allocator.allocate(0, 4 * kKiB, stream(6));
  DataPtr outside = allocator.allocate(0, 4 * kKiB, stream(5));
  allocator.endAllocateToPool(0, pool, stream(6));
  std::vector<MempoolId> pools;
  for (const MemorySegment& segment : allocator.snapshot({.device = 0}).segments) {
    pools.push_back(segment.pool);
  }
  EXPECT_EQ(std::count(pools.begin(), pools.end(), pool), 1);
  EXPECT_EQ(std::count(pools.begin(), pools.end(), MempoolId{}), 1);
  still_in_pool.reset();
  allocator.releasePool(0, pool);
  allocator.releasePool(0, pool);
}

TEST(PrivatePools, SegmentInUseWhenReleasedReturnsWhenFreed) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const MempoolId pool = allocator.createPool();
  allocator.retainPool(0, pool);
  allocator.beginAllocateToPool(0, pool, stream(0));
  DataPtr block = allocator.allocate(0, 3 * kMiB, stream(0));
  allocator.endAllocateToPool(0, pool, stream(0));
  allocator.releasePool(0, pool);
  EXPECT_EQ(allocator.stats(0).reserved_bytes.current, 20 * MiB);
  block.reset();
  EXPECT_EQ(allocator.stats(0).reserved_bytes.current, 0);
  EXPECT_EQ(source.used(), 0u);
}

TEST(ExpandableSegments, OneSegmentGrowsAcrossBatchShapesAndShrinks) {
  const std::vector<std::size_t> shapes{30 * kMiB, 50 * kMiB, 70 * kMiB, 90 * kMiB};
  std::int64_t reserved_fixed = 0;
  {
    FakeSegmentSource source(std::size_t{1} << 30, false, 2 * kMiB);
    CachingAllocator allocator(DeviceType::CUDA, 1, source);
    for (std::size_t shape : shapes) allocator.allocate(0, shape, stream(0)).reset();
    reserved_fixed = allocator.stats(0).reserved_bytes.current;
  }
  FakeSegmentSource source(std::size_t{1} << 30, false, 2 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source,
                             parseAllocatorSettings("expandable_segments:true"));
  for (std::size_t shape : shapes) allocator.allocate(0, shape, stream(0)).reset();
  MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(reserved_fixed, 240 * MiB);               // one segment per shape
  EXPECT_EQ(stats.reserved_bytes.current, 90 * MiB);  // grown to the largest
  EXPECT_EQ(stats.segments.current, 1);
  EXPECT_EQ(source.reservations.load(), 1);

  DataPtr a = allocator.allocate(0, 40 * kMiB, stream(0));
  DataPtr b = allocator.allocate(0, 60 * kMiB, stream(0));  // grows by 10 MiB
  EXPECT_EQ(static_cast<std::byte*>(b.get()),
            static_cast<std::byte*>(a.get()) + 40 * kMiB);
  EXPECT_EQ(allocator.stats(0).reserved_bytes.current, 100 * MiB);
  MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  ASSERT_EQ(snapshot.segments.size(), 1u);
  EXPECT_TRUE(snapshot.segments[0].is_expandable);
  b.reset();
  allocator.emptyCache();  // unmaps the free tail
  stats = allocator.stats(0);
  EXPECT_EQ(stats.reserved_bytes.current, 40 * MiB);
  EXPECT_EQ(source.mapped(), 40 * kMiB);
  a.reset();
  allocator.emptyCache();  // nothing mapped: the range goes back too
  EXPECT_EQ(allocator.stats(0).reserved_bytes.current, 0);
  EXPECT_EQ(allocator.stats(0).segments.current, 0);
  EXPECT_EQ(source.range_releases.load(), 1);
  EXPECT_EQ(source.used(), 0u);
}

}  // namespace
}  // namespace accel::memory

namespace accel::memory {
namespace {

// A model of the block figures, kept by the test: sizes are chosen so that
// a block is exactly its rounded size (small requests split every 2 MiB
// segment exactly; large ones are multiples of 2 MiB in 20 MiB segments).
struct FigureModel {
  struct Figure {
    std::int64_t current = 0, peak = 0, allocated = 0, freed = 0;
    void add(std::int64_t v) {
      current += v;
      allocated += v;
      peak = std::max(peak, current);
    }
    void remove(std::int64_t v) {
      current -= v;
      freed += v;
    }
  };
  // [0] large pool, [1] small pool, [2] all.
  Figure bytes[3], requested[3], count[3];

  void allocated(bool small, std::int64_t size, std::int64_t asked) {
    for (int p : {static_cast<int>(small), 2}) {
      bytes[p].add(size);
      requested[p].add(asked);
      count[p].add(1);
    }
  }
  void freed(bool small, std::int64_t size, std::int64_t asked) {
    for (int p : {static_cast<int>(small), 2}) {
      bytes[p].remove(size);
      requested[p].remove(asked);
      count[p].remove(1);
    }
  }
  void resetPeaks() {
    for (Figure* figures : {bytes, requested, count}) {
      for (int p = 0; p < 3; ++p) figures[p].peak = figures[p].current;
    }
  }
};

void expectFigure(const PooledStat& actual, const FigureModel::Figure* model,
                  const char* name, int step) {
  const Stat* pools[3] = {&actual.large_pool, &actual.small_pool, &actual};
  const char* pool_names[3] = {"large_pool", "small_pool", "all"};
  for (int p = 0; p < 3; ++p) {
    SCOPED_TRACE(::testing::Message()
                 << name << "." << pool_names[p] << " at step " << step);
    EXPECT_EQ(pools[p]->current, model[p].current);
    EXPECT_EQ(pools[p]->peak, model[p].peak);
    EXPECT_EQ(pools[p]->allocated, model[p].allocated);
    EXPECT_EQ(pools[p]->freed, model[p].freed);
  }
}

// Random allocations and frees of a few sizes (so that freed blocks are held
// and taken back by the fast path), peak resets and emptyCache, with the
// figures compared against the model every few steps, peaks included: the
// allocation path skips the peak checks while its "rooms" below the peaks
// allow it, and must never miss a new peak.
TEST(BlockFigures, PeaksAndTotalsFollowAModelThroughRandomTraffic) {
  FakeSegmentSource source(std::size_t{4} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  static constexpr std::size_t kSizes[] = {512,      1024,     4 * kKiB, 64 * kKiB,
                                           1 * kMiB, 2 * kMiB, 4 * kMiB, 6 * kMiB};
  struct Live {
    DataPtr data;
    std::size_t size;
    std::size_t asked;
  };
  std::vector<Live> live;
  FigureModel model;
  std::mt19937 random(2026);
  for (int step = 0; step < 4000; ++step) {
    const unsigned roll = random() % 100;
    if (roll < 55 || live.empty()) {
      const std::size_t size = kSizes[random() % std::size(kSizes)];
      const std::size_t asked = size - random() % 512;
      live.push_back({allocator.allocate(0, asked, stream(0)), size, asked});
      model.allocated(size <= kMiB, static_cast<std::int64_t>(size),
                      static_cast<std::int64_t>(asked));
    } else if (roll < 97) {
      const std::size_t at = random() % live.size();
      model.freed(live[at].size <= kMiB, static_cast<std::int64_t>(live[at].size),
                  static_cast<std::int64_t>(live[at].asked));
      live.erase(live.begin() + static_cast<long>(at));
    } else if (roll < 99) {
      allocator.resetPeakStats(0);
      model.resetPeaks();
    } else {
      allocator.emptyCache();
    }
    if (step % 13 == 0 || step == 3999) {
      const MemoryStats stats = allocator.stats(0);
      expectFigure(stats.allocated_bytes, model.bytes, "allocated_bytes", step);
      expectFigure(stats.active_bytes, model.bytes, "active_bytes", step);
      expectFigure(stats.requested_bytes, model.requested, "requested_bytes", step);
      expectFigure(stats.allocations, model.count, "allocations", step);
      expectFigure(stats.active, model.count, "active", step);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace accel::memory
