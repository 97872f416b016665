// Thread caches (src/core/memory/thread_cache.h) with real threads: figures
// exact while other threads hold cached blocks, peaks that do not count a
// block twice, readers and emptyCache racing with pairs, threads and
// allocators that end in either order, and the switch. Meant for TSan too.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kMiB;

Stream firstStreamOf(DeviceIndex device = 0) {
  return Stream(Device::unchecked(DeviceType::CUDA, device), 0);
}

// A thread that runs `work`, then stays alive (its cache with it) until
// release() is called.
class ParkedThread {
 public:
  template <typename Work>
  explicit ParkedThread(Work work)
      : thread_([this, work] {
          work();
          done_.store(true);
          while (!release_.load()) std::this_thread::yield();
        }) {
    while (!done_.load()) std::this_thread::yield();
  }
  ~ParkedThread() { release(); }
  void release() {
    release_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::atomic<bool> release_{false};
  std::thread thread_;
};

TEST(ThreadCaches, StatsCountBlocksInOtherThreadsCachesAsFreedExactly) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  ParkedThread holder([&] {
    for (int round = 0; round < 3; ++round) {
      std::vector<DataPtr> live;
      for (int i = 0; i < 6; ++i)
        live.push_back(allocator.allocate(0, 1000, firstStreamOf()));
    }  // freed into this thread's cache; the next rounds take them back
  });
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.allocations.current, 0);
  EXPECT_EQ(stats.allocations.allocated, 18);
  EXPECT_EQ(stats.allocations.freed, 18);
  EXPECT_EQ(stats.allocated_bytes.peak, 6 * 1024);
  EXPECT_EQ(stats.requested_bytes.allocated, 18 * 1000);
  EXPECT_EQ(stats.inactive_split_bytes.current, 0);  // merged back whole
  EXPECT_EQ(stats.num_device_alloc, 1);
  allocator.emptyCache();
  EXPECT_EQ(allocator.stats(0).reserved_bytes.current, 0);
  EXPECT_EQ(source.used(), 0u);
}

TEST(ThreadCaches, APeakIsNotRaisedByABlockAnotherThreadHasFreed) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  ParkedThread other([&] { allocator.allocate(0, kMiB, firstStreamOf()).reset(); });
  // The other thread's block is cached there, counted as freed: this one is
  // the only live block, so the peak stays one block.
  DataPtr mine = allocator.allocate(0, kMiB, firstStreamOf());
  EXPECT_NE(mine.get(), nullptr);
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.allocated_bytes.peak, static_cast<std::int64_t>(kMiB));
  EXPECT_EQ(stats.allocations.peak, 1);
  EXPECT_EQ(stats.requested_bytes.peak, static_cast<std::int64_t>(kMiB));
}

TEST(ThreadCaches, PairsRacingWithStatsSnapshotsAndEmptyCacheBalanceOut) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 2, source);
  constexpr int kThreads = 4;
  constexpr int kPairs = 20000;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const DeviceIndex device = static_cast<DeviceIndex>(t % 2);
      const std::size_t sizes[] = {256, 4096, 64 << 10, 3 * kMiB};
      for (int i = 0; i < kPairs; ++i) {
        DataPtr a = allocator.allocate(device, sizes[i % 4], firstStreamOf(device));
        DataPtr b = allocator.allocate(device, sizes[(i + t) % 4], firstStreamOf(device));
        if (i % 3 == 0) a.reset();
      }
      running.fetch_sub(1);
    });
  }
  int reads = 0;
  while (running.load() > 0) {
    for (DeviceIndex device = 0; device < 2; ++device) {
      const MemoryStats stats = allocator.stats(device);
      // At most two blocks per thread are live at any moment.
      EXPECT_GE(stats.allocations.current, 0);
      EXPECT_LE(stats.allocations.current, 2 * kThreads);
      EXPECT_LE(stats.allocated_bytes.current, stats.allocated_bytes.peak);
      EXPECT_LE(stats.allocated_bytes.peak, stats.reserved_bytes.peak);
    }
    if (++reads % 4 == 0) allocator.emptyCache();
    if (reads % 8 == 0) (void)allocator.snapshot({.device = 0});
    std::this_thread::yield();
  }
  for (std::thread& thread : threads) thread.join();
  allocator.emptyCache();
  for (DeviceIndex device = 0; device < 2; ++device) {
    const MemoryStats stats = allocator.stats(device);
    EXPECT_EQ(stats.allocations.current, 0);
    EXPECT_EQ(stats.allocated_bytes.current, 0);
    EXPECT_EQ(stats.requested_bytes.current, 0);
    EXPECT_EQ(stats.allocations.allocated, 2 * kPairs * (kThreads / 2));
    EXPECT_EQ(stats.reserved_bytes.current, 0);
  }
  EXPECT_EQ(source.used(), 0u);
}

TEST(ThreadCaches, AThreadThatExitsGivesItsCachedBlocksBack) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  std::thread([&] {
    std::vector<DataPtr> live;
    for (int i = 0; i < 8; ++i)
      live.push_back(allocator.allocate(0, 2048, firstStreamOf()));
  }).join();
  const MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  ASSERT_EQ(snapshot.segments.size(), 1u);
  ASSERT_EQ(snapshot.segments[0].blocks.size(), 1u);  // one free block, merged
  EXPECT_EQ(snapshot.segments[0].blocks[0].state, MemoryBlock::State::Free);
}

TEST(ThreadCaches, AnAllocatorDestroyedBeforeTheThreadsThatCachedItsBlocks) {
  FakeSegmentSource source(std::size_t{1} << 30);
  std::atomic<int> phase{0};
  auto allocator = std::make_unique<CachingAllocator>(DeviceType::CUDA, 1, source);
  std::thread thread([&] {
    allocator->allocate(0, 512, firstStreamOf()).reset();  // cached on this thread
    phase.store(1);
    while (phase.load() != 2) std::this_thread::yield();
    // A new allocator (perhaps at the same address): a cache of its own.
    allocator->allocate(0, 512, firstStreamOf()).reset();
    EXPECT_EQ(allocator->stats(0).allocations.allocated, 1);
  });
  while (phase.load() != 1) std::this_thread::yield();
  allocator.reset();
  allocator = std::make_unique<CachingAllocator>(DeviceType::CUDA, 1, source);
  phase.store(2);
  thread.join();
  allocator.reset();
  EXPECT_EQ(source.used(), 0u);
}

TEST(ThreadCaches, TheSwitchTurnsThemOffWithTheSameFigures) {
  for (const char* settings : {"", "thread_caches:false", "biased_lock:false",
                               "thread_caches:false,biased_lock:false"}) {
    SCOPED_TRACE(settings);
    FakeSegmentSource source(std::size_t{1} << 30);
    CachingAllocator allocator(DeviceType::CUDA, 1, source,
                               parseAllocatorSettings(settings));
    ParkedThread worker([&] {
      for (int i = 0; i < 100; ++i)
        allocator.allocate(0, 300 + i % 3, firstStreamOf()).reset();
    });
    const MemoryStats stats = allocator.stats(0);
    EXPECT_EQ(stats.allocations.allocated, 100);
    EXPECT_EQ(stats.allocated_bytes.peak, 512);
    EXPECT_EQ(stats.requested_bytes.allocated, 100 * 300 + 33 + 2 * 33);
    EXPECT_EQ(stats.num_device_alloc, 1);
  }
}

TEST(ThreadCaches, SettingsAndPrivatePoolsChangedWhileAnotherThreadHoldsBlocks) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  ParkedThread holder([&] { allocator.allocate(0, 4096, firstStreamOf()).reset(); });
  const MempoolId pool = allocator.createPool();
  allocator.retainPool(0, pool);
  allocator.beginAllocateToPool(0, pool, firstStreamOf());
  // Requests on the routed stream come from the pool, not from any cache.
  DataPtr routed = allocator.allocate(0, 4096, firstStreamOf());
  MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  bool in_pool = false;
  for (const MemorySegment& segment : snapshot.segments) {
    for (const MemoryBlock& block : segment.blocks) {
      if (block.address == reinterpret_cast<std::uintptr_t>(routed.get()))
        in_pool = segment.pool == pool;
    }
  }
  EXPECT_TRUE(in_pool);
  routed.reset();
  allocator.endAllocateToPool(0, pool, firstStreamOf());
  allocator.releasePool(0, pool);
  allocator.setSettings(parseAllocatorSettings("roundup_power2_divisions:4"));
  EXPECT_EQ(allocator.stats(0).allocated_bytes.current, 0);
}

}  // namespace
}  // namespace accel::memory
