// Eight threads allocating and freeing on their own streams, handing blocks
// to each other's streams with recordStream. Meant to run under TSan as well
// (see docs/memory.md); here it checks that nothing is lost or double-counted.
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "memory/fake_segment_source.h"

namespace accel::memory {
namespace {

TEST(CachingAllocatorThreads, EightThreadsOnDifferentStreamsBalanceOut) {
  testing::FakeSegmentSource source(std::size_t{8} << 30, /*events=*/true);
  source.setAutoComplete(true);
  CachingAllocator allocator(DeviceType::CUDA, 2, source);
  allocator.recordHistory({HistoryRecording::All, 1000, false});
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const DeviceIndex device = static_cast<DeviceIndex>(t % 2);
      const Device where = Device::unchecked(DeviceType::CUDA, device);
      std::mt19937 random(static_cast<unsigned>(t));
      std::vector<DataPtr> live;
      for (int i = 0; i < 2000; ++i) {
        const std::size_t size = std::size_t{1} << (random() % 24);
        live.push_back(allocator.allocate(device, size, Stream(where, t)));
        if (i % 5 == 0)
          allocator.recordStream(live.back(), Stream(where, (t + 1) % kThreads));
        if (live.size() > 16)
          live.erase(live.begin() + static_cast<long>(random() % live.size()));
        if (i % 500 == 0) (void)allocator.stats(device);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  allocator.emptyCache();
  for (DeviceIndex device = 0; device < 2; ++device) {
    const MemoryStats stats = allocator.stats(device);
    EXPECT_EQ(stats.allocations.current, 0);
    EXPECT_EQ(stats.allocated_bytes.current, 0);
    EXPECT_EQ(stats.active_bytes.current, 0);
    EXPECT_EQ(stats.reserved_bytes.current, 0);
    EXPECT_EQ(stats.allocations.allocated, 4 * 2000);
  }
  EXPECT_EQ(source.used(), 0u);
}

TEST(PinnedCachingAllocatorThreads, EightThreadsShareOneCache) {
  testing::FakeSegmentSource source(std::size_t{1} << 30, /*events=*/true);
  source.setAutoComplete(true);
  PinnedCachingAllocator pinned(source);
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Device where = Device::unchecked(DeviceType::CUDA, 0);
      std::mt19937 random(static_cast<unsigned>(t) + 100);
      std::vector<DataPtr> live;
      for (int i = 0; i < 2000; ++i) {
        live.push_back(pinned.allocate(std::size_t{1} << (random() % 16)));
        if (i % 3 == 0) pinned.recordStream(live.back(), Stream(where, t));
        EXPECT_TRUE(pinned.isPinnedPtr(live.back().get()));
        if (live.size() > 8)
          live.erase(live.begin() + static_cast<long>(random() % live.size()));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  pinned.emptyCache();
  const MemoryStats stats = pinned.stats();
  EXPECT_EQ(stats.allocations.current, 0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.reserved_bytes.current, 0);
  EXPECT_EQ(stats.allocations.allocated, kThreads * 2000);
  EXPECT_EQ(source.used(), 0u);
}

}  // namespace
}  // namespace accel::memory

namespace accel::memory {
namespace {

// One thread allocates, another frees what it is handed: the device lock
// changes hands at almost every call, so its bias is withdrawn and granted
// over and over (TSan checks each hand-over). Nothing may be lost.
TEST(CachingAllocatorThreads, OneThreadAllocatesAnotherFrees) {
  testing::FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const Stream stream(Device::unchecked(DeviceType::CUDA, 0), 0);
  constexpr int kBlocks = 20000;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<DataPtr> handed;
  bool done = false;
  std::thread freer([&] {
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex);
      ready.wait(lock, [&] { return done || !handed.empty(); });
      if (handed.empty()) return;
      DataPtr block = std::move(handed.front());
      handed.pop_front();
      lock.unlock();
      block.reset();  // freed on this thread
    }
  });
  std::mt19937 random(7);
  for (int i = 0; i < kBlocks; ++i) {
    DataPtr block = allocator.allocate(0, 512 * (1 + random() % 4), stream);
    // Runs of the allocating thread alone, so that it earns the bias too.
    if (i % 64 < 32) {
      std::lock_guard<std::mutex> lock(mutex);
      handed.push_back(std::move(block));
      ready.notify_one();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    ready.notify_one();
  }
  freer.join();
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.allocations.current, 0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.requested_bytes.current, 0);
  EXPECT_EQ(stats.allocations.allocated, kBlocks);
  EXPECT_EQ(stats.allocations.freed, kBlocks);
  allocator.emptyCache();
  EXPECT_EQ(source.used(), 0u);
}

}  // namespace
}  // namespace accel::memory
