// fork() and the pinned host cache (src/core/memory/pinned_fork.cpp): a child
// forked while another thread holds the cache's mutex can still use the
// cache, and a child never gives its parent's pinned memory back to the
// source (a CUDA child would call cudaFreeHost on it). Each child reports
// through its exit status; a child that does not finish in 20 s is killed and
// fails the test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "accel/memory/pinned_caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

constexpr int kHung = 125;  // waitForChild's answer for a child it had to kill

using testing::stream0;

// The child's exit status (0: finished well), or kHung when it had not
// finished after 20 s and was killed.
int waitForChild(pid_t child) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    if (done < 0) return 127;
    usleep(2000);
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return kHung;
}

TEST(PinnedFork, AChildNeverGivesInheritedPinnedMemoryToTheSource) {
  FakeSegmentSource source(std::size_t{1} << 30, /*events=*/true);
  PinnedCachingAllocator allocator(source);
  DataPtr kept = allocator.allocate(4096);
  DataPtr used = allocator.allocate(8192);
  allocator.recordStream(used, stream0());
  { DataPtr cached = allocator.allocate(1 << 20); }  // cached, free
  used = DataPtr();                                  // pending on its event
  const MemoryStats before = allocator.stats();
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    const int frees = source.frees.load();
    const int released = source.released_events.load();
    kept = DataPtr();        // leaks: the parent's memory
    allocator.emptyCache();  // leaves the cached 1 MiB and the pending block
    source.completeAll();
    // A new request gets new memory, never the parent's cached 1 MiB block.
    const int allocations = source.allocations.load();
    DataPtr fresh = allocator.allocate(1 << 20);
    const bool new_block = source.allocations.load() == allocations + 1;
    const MemoryStats after = allocator.stats();
    fresh = DataPtr();
    allocator.emptyCache();  // the child's own block does go back
    const bool own_freed = source.frees.load() == frees + 1;
    const bool untouched =
        source.released_events.load() == released && own_freed && new_block;
    // The leaked free counts as freed (allocated down) but stays active.
    const bool figures =
        after.allocated_bytes.current ==
            before.allocated_bytes.current - 4096 + (1 << 20) &&
        after.active_bytes.current == before.active_bytes.current + (1 << 20) &&
        after.reserved_bytes.current == before.reserved_bytes.current + (1 << 20);
    _exit(untouched ? (figures ? 0 : 2) : 1);
  }
  EXPECT_EQ(waitForChild(child), 0)
      << "1: the child gave its parent's pinned memory or events to the source (or "
         "reused it); 2: wrong figures; 125: it hung";
  // In the parent the same free and emptyCache do reach the source.
  const int frees = source.frees.load();
  kept = DataPtr();
  allocator.emptyCache();
  EXPECT_EQ(source.frees.load(), frees + 2) << "the 4 KiB and the 1 MiB blocks";
}

// A source whose allocations wait until the test lets them go: a thread
// inside one holds the cache's mutex.
class BlockingSource final : public FakeSegmentSource {
 public:
  BlockingSource() : FakeSegmentSource(std::size_t{1} << 30) {}
  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    {
      std::unique_lock<std::mutex> lock(gate_mutex_);
      if (blocking_) {
        inside_ = true;
        changed_.notify_all();
        changed_.wait(lock, [&] { return !blocking_; });
      }
    }
    return FakeSegmentSource::allocateSegment(index, bytes);
  }
  void waitUntilInside() {
    std::unique_lock<std::mutex> lock(gate_mutex_);
    changed_.wait(lock, [&] { return inside_; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(gate_mutex_);
    blocking_ = false;
    changed_.notify_all();
  }

 private:
  std::mutex gate_mutex_;
  std::condition_variable changed_;
  bool blocking_ = true;
  bool inside_ = false;
};

// Before fork() held the pinned caches, a child forked while another thread
// was inside the source (so holding the cache's mutex) waited forever on
// its first use of the cache.
TEST(PinnedFork, AChildForkedWhileAThreadHoldsTheCacheCanUseIt) {
  BlockingSource source;
  PinnedCachingAllocator allocator(source);
  std::thread holder([&] { DataPtr data = allocator.allocate(4096); });
  source.waitUntilInside();
  std::atomic<int> result{-1};
  std::thread forker([&] {
    // fork() now waits for the holder to leave the cache (fixed), or forks
    // at once while it holds it (the defect).
    const pid_t child = fork();
    if (child == 0) {
      const MemoryStats stats = allocator.stats();
      { DataPtr data = allocator.allocate(512); }
      allocator.emptyCache();
      _exit(stats.allocations.current >= 0 ? 0 : 2);
    }
    result.store(child < 0 ? 126 : waitForChild(child));
  });
  // Let the forker reach fork() before the holder may go on.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  source.open();
  forker.join();
  holder.join();
  EXPECT_EQ(result.load(), 0) << "125: the child hung on the cache's mutex";
}

}  // namespace
}  // namespace accel::memory
