// kit::CachingDeviceAllocator (include/accel/kit/caching_device_allocator.h):
// a device's Allocator over the core cache, on the thread's current stream,
// with the core's blocks as they are; a diverted device's requests go to
// the backend's Detour; out-of-memory errors pass through the Detour.
#include "accel/kit/caching_device_allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "memory/fake_segment_source.h"

namespace accel::kit {
namespace {

using memory::CachingAllocator;
using memory::testing::FakeSegmentSource;

constexpr std::size_t kCapacity = std::size_t{1} << 30;

// Counts its calls; allocates from the cache like a backend whose checks
// passed, and adds advice to out-of-memory errors.
class CountingDetour final : public CachingDeviceAllocator::Detour {
 public:
  DataPtr allocate(CachingDeviceAllocator& allocator, std::size_t bytes) override {
    calls.fetch_add(1);
    return allocator.allocateFromCache(bytes);
  }
  void outOfMemory(const OutOfMemory& error, const CachingDeviceAllocator& allocator,
                   std::size_t bytes) override {
    throw OutOfMemory(error.message() + " [advice for " + std::to_string(bytes) +
                      " bytes on device " +
                      std::to_string(static_cast<int>(allocator.device().index())) + "]");
  }
  std::atomic<int> calls{0};
};

TEST(CachingDeviceAllocator, AllocatesOnTheThreadsCurrentStreamAndHandsOutTheCoresBlock) {
  FakeSegmentSource source(kCapacity);
  CachingAllocator cache(DeviceType::XPU, 2, source);
  ThreadCurrent current;
  CachingDeviceAllocator allocator(cache, 1, current);
  EXPECT_EQ(allocator.device(), Device(DeviceType::XPU, 1));
  current.setStream(1, 3);
  DataPtr data = allocator.allocate(1000);
  ASSERT_TRUE(data);
  EXPECT_EQ(data.device(), allocator.device());
  EXPECT_TRUE(cache.owns(data)) << "not the core's block: recordStream would refuse it";
  EXPECT_EQ(data.deleter(), CachingAllocator::blockDeleter());
  const std::optional<memory::BlockInfo> block = cache.findBlock(1, data.get());
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->stream, Stream(allocator.device(), 3));
  EXPECT_EQ(block->requested, 1000u);
  EXPECT_EQ(cache.stats(1).allocations.current, 1);
  EXPECT_EQ(cache.stats(0).allocations.current, 0) << "allocated on the wrong device";
  data.reset();
  EXPECT_EQ(cache.stats(1).allocations.current, 0);
  EXPECT_EQ(cache.stats(1).allocations.freed, 1);
}

TEST(CachingDeviceAllocator, ZeroBytesGiveAnEmptyDataPtrOnTheDevice) {
  FakeSegmentSource source(kCapacity);
  CachingAllocator cache(DeviceType::XPU, 1, source);
  ThreadCurrent current;
  CachingDeviceAllocator allocator(cache, 0, current);
  DataPtr empty = allocator.allocate(0);
  EXPECT_FALSE(empty);
  EXPECT_EQ(empty.device(), Device(DeviceType::XPU, 0));
  EXPECT_EQ(cache.stats(0).allocations.allocated, 0);
}

TEST(CachingDeviceAllocator, DivertedRequestsGoToTheDetourUntilTheFlagIsCleared) {
  FakeSegmentSource source(kCapacity);
  CachingAllocator cache(DeviceType::XPU, 1, source);
  ThreadCurrent current;
  CountingDetour detour;
  CachingDeviceAllocator allocator(cache, 0, current, &detour, true);
  EXPECT_TRUE(allocator.diverted());
  DataPtr first = allocator.allocate(512);
  EXPECT_EQ(detour.calls.load(), 1);
  EXPECT_TRUE(cache.owns(first));
  allocator.setDiverted(false);
  DataPtr second = allocator.allocate(512);
  EXPECT_EQ(detour.calls.load(), 1) << "an undiverted request reached the detour";
  allocator.setDiverted(true);
  DataPtr third = allocator.allocate(0);
  EXPECT_EQ(detour.calls.load(), 2)
      << "the detour sees every diverted request, 0 bytes too";
  EXPECT_EQ(cache.stats(0).allocations.current, 2);
}

TEST(CachingDeviceAllocator, OutOfMemoryOnTheFastPathCarriesTheDetoursAdvice) {
  FakeSegmentSource source(std::size_t{4} << 20);
  CachingAllocator cache(DeviceType::XPU, 1, source);
  ThreadCurrent current;
  CountingDetour detour;
  CachingDeviceAllocator advised(cache, 0, current, &detour);
  try {
    (void)advised.allocate(std::size_t{64} << 20);
    FAIL() << "64 MiB from a 4 MiB device did not throw";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("[advice for 67108864 bytes on device 0]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(detour.calls.load(), 0);
  EXPECT_EQ(cache.stats(0).num_ooms, 1) << "the core's out-of-memory path did not run";
  // Without a detour the core's error passes as it is.
  CachingDeviceAllocator plain(cache, 0, current);
  EXPECT_THROW((void)plain.allocate(std::size_t{64} << 20), OutOfMemory);
  EXPECT_EQ(cache.stats(0).num_ooms, 2);
}

TEST(CachingDeviceAllocator, RefusesABadIndexAndADiversionWithNowhereToGo) {
  FakeSegmentSource source(kCapacity);
  CachingAllocator cache(DeviceType::XPU, 2, source);
  ThreadCurrent current;
  EXPECT_THROW(CachingDeviceAllocator(cache, 2, current), InvalidArgument);
  EXPECT_THROW(CachingDeviceAllocator(cache, -1, current), InvalidArgument);
  EXPECT_THROW(CachingDeviceAllocator(cache, 0, current, nullptr, true), InvalidArgument);
  CachingDeviceAllocator allocator(cache, 0, current);
  EXPECT_THROW(allocator.setDiverted(true), InvalidArgument);
  EXPECT_FALSE(allocator.diverted());
  allocator.setDiverted(false);  // nothing to divert from: allowed
}

// Threads allocating on their own streams while another flips the flag:
// every request is served exactly once, by the cache or by the detour, and
// the statistics add up (run under TSan).
TEST(CachingDeviceAllocator, ThreadsAllocatingWhileTheFlagFlipsAreEachServedOnce) {
  FakeSegmentSource source(kCapacity);
  CachingAllocator cache(DeviceType::XPU, 1, source);
  ThreadCurrent current;
  CountingDetour detour;
  CachingDeviceAllocator allocator(cache, 0, current, &detour);
  constexpr int kThreads = 3;
  constexpr int kPairs = 2000;
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    bool on = false;
    while (!stop.load()) allocator.setDiverted(on = !on);
    allocator.setDiverted(false);
  });
  std::vector<std::thread> threads;
  std::atomic<int> wrong_stream{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      current.setStream(0, t + 1);
      for (int i = 0; i < kPairs; ++i) {
        DataPtr data = allocator.allocate(256 + 512 * static_cast<std::size_t>(i % 3));
        const std::optional<memory::BlockInfo> block = cache.findBlock(0, data.get());
        if (!block || block->stream.id != t + 1) wrong_stream.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  stop.store(true);
  flipper.join();
  EXPECT_EQ(wrong_stream.load(), 0);
  const MemoryStats stats = cache.stats(0);
  EXPECT_EQ(stats.allocations.allocated, kThreads * kPairs);
  EXPECT_EQ(stats.allocations.current, 0);
  EXPECT_LE(detour.calls.load(), kThreads * kPairs);
}

}  // namespace
}  // namespace accel::kit
