// fork() and the caching allocator
// (src/core/memory/device_cache/device_fork.cpp): a child forked while other
// threads are inside a device's lock, its bias or their thread caches can
// still read statistics, take snapshots and empty the cache; and a child leaves the
// memory it inherited alone (frees leak, no segment goes back to the source). Each child
// reports through its exit status; a child that does not finish in 20 s is killed and
// fails the test.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kMiB;
constexpr int kHung = 125;  // waitForChild's answer for a child it had to kill

using testing::stream0;

// The child's exit status (0: finished well), or kHung when it had not
// finished after `limit` and was killed.
int waitForChild(pid_t child, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
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

// What every child does with the allocator: each call needs every thread's
// cache and the device lock.
[[noreturn]] void useInChildAndExit(CachingAllocator& allocator) {
  const MemoryStats stats = allocator.stats(0);
  allocator.emptyCache();
  MemorySnapshotOptions options;
  options.device = 0;
  const MemorySnapshot snapshot = allocator.snapshot(options);
  // The figures and the snapshot agree (the blocks of the threads that did
  // not survive are counted where they are).
  std::size_t active = 0;
  for (const MemorySegment& segment : snapshot.segments) active += segment.active_size;
  const bool agree =
      stats.segments.current == static_cast<std::int64_t>(snapshot.segments.size()) &&
      stats.active_bytes.current == static_cast<std::int64_t>(active);
  _exit(agree ? 0 : 3);
}

// Two threads run 256 B pairs on one device while the main thread forks 30
// times; before fork() held the devices, a child forked while a thread was
// inside its cache section waited for it forever.
void forkWhileTwoThreadsRunPairs(const AllocatorSettings& settings) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source, settings);
  std::atomic<bool> stop{false};
  std::atomic<long> pairs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        DataPtr data = allocator.allocate(0, 256, stream0());
        pairs.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  while (pairs.load() < 10'000) std::this_thread::yield();
  int hung = 0, failed = 0;
  for (int round = 0; round < 30; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0) << "fork failed";
    if (child == 0) useInChildAndExit(allocator);
    const int status = waitForChild(child);
    if (status != 0 && status != kHung) ++failed;
    if (status == kHung && ++hung > 0) break;  // one is enough (20 s each)
    const long before = pairs.load();          // the parent's threads go on after a fork
    while (pairs.load() < before + 1000) std::this_thread::yield();
  }
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(hung, 0)
      << "children that hung reading figures, emptying the cache or taking a snapshot";
  EXPECT_EQ(failed, 0) << "children whose figures were wrong (exit 3) or crashed";
  const MemoryStats stats = allocator.stats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.allocations.current, 0);
}

TEST(CachingAllocatorFork, ChildOfThreadsInTheirCachesCanReadAndEmptyTheCache) {
  forkWhileTwoThreadsRunPairs({});
}

TEST(CachingAllocatorFork, ChildOfThreadsOnTheDeviceLockCanReadAndEmptyTheCache) {
  AllocatorSettings settings;
  settings.thread_caches = false;  // every pair takes the (biased) device lock
  forkWhileTwoThreadsRunPairs(settings);
}

// A source whose next segment allocation, once armed, blocks until let go:
// the allocating thread is then inside the device's lock (through the bias,
// or holding its mutex) for as long as the test wants.
class BlockingSource : public FakeSegmentSource {
 public:
  BlockingSource() : FakeSegmentSource(std::size_t{1} << 30) {}
  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    if (armed.exchange(false)) {
      inside.store(true);
      while (!go.load()) std::this_thread::yield();
    }
    return FakeSegmentSource::allocateSegment(index, bytes);
  }
  std::atomic<bool> armed{false};
  std::atomic<bool> inside{false};
  std::atomic<bool> go{false};
};

// Set by this test's own atfork prepare handler, which (registered after the
// library's) runs before the library's: the fork has begun.
std::atomic<bool> g_fork_began{false};
void noteForkBegan() { g_fork_began.store(true); }

// A thread is inside the device's lock (holding the bias, or its mutex)
// when another forks. The fork must wait for it to leave (so a helper lets it
// go once the fork has begun); the child then uses the device.
void forkWhileAThreadIsInsideTheLock(bool biased) {
  static const bool registered = (pthread_atfork(&noteForkBegan, nullptr, nullptr), true);
  (void)registered;
  BlockingSource source;
  AllocatorSettings settings;
  settings.thread_caches = false;
  settings.biased_lock = biased;
  CachingAllocator allocator(DeviceType::CUDA, 1, source, settings);
  std::atomic<bool> stop{false};
  std::thread holder([&] {
    // Slow locks in a row by this thread grant it the bias (when allowed).
    for (int i = 0; i < 16; ++i) DataPtr data = allocator.allocate(0, 256, stream0());
    source.armed.store(true);
    DataPtr big = allocator.allocate(0, 8 * kMiB, stream0());  // blocks in the source
    while (!stop.load()) std::this_thread::yield();
  });
  while (!source.inside.load()) std::this_thread::yield();
  g_fork_began.store(false);
  std::thread letter([&] {
    while (!g_fork_began.load()) std::this_thread::yield();
    // Only so that the fork is well under way (before the fix it would have
    // completed with the holder inside): correctness does not rest on it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    source.go.store(true);
  });
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) useInChildAndExit(allocator);
  const int status = waitForChild(child);
  letter.join();
  stop.store(true);
  holder.join();
  EXPECT_NE(status, kHung) << "the child hung on a lock its parent's thread held";
  EXPECT_EQ(status, 0);
}

TEST(CachingAllocatorFork, ChildOfAThreadInsideTheLockThroughItsBiasCanUseTheDevice) {
  forkWhileAThreadIsInsideTheLock(true);
}

TEST(CachingAllocatorFork, ChildOfAThreadHoldingTheLockCanUseTheDevice) {
  forkWhileAThreadIsInsideTheLock(false);
}

// The child's rule: memory inherited from the parent is not the child's to
// give back or hand out. Exit codes name the first broken expectation.
TEST(CachingAllocatorFork, ChildLeaksFreesOfInheritedMemoryAndNeverReleasesIt) {
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  DataPtr small = allocator.allocate(0, 256, stream0());
  DataPtr large = allocator.allocate(0, 30 * kMiB, stream0());       // its own segment
  { DataPtr cached = allocator.allocate(0, 40 * kMiB, stream0()); }  // a free segment
  const MemoryStats before = allocator.stats(0);
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    const int allocations = source.allocations.load();
    const int frees = source.frees.load();
    small = DataPtr();
    large = DataPtr();
    allocator.emptyCache();
    if (source.frees.load() != frees) _exit(10);  // an inherited segment went back
    const MemoryStats after = allocator.stats(0);
    // Freed by their users, active for good: the figures say so exactly.
    if (after.allocated_bytes.current != 0) _exit(11);
    if (after.active_bytes.current != before.allocated_bytes.current) _exit(12);
    if (after.reserved_bytes.current != before.reserved_bytes.current) _exit(13);
    // A request the inherited free segment would fit gets a new one.
    DataPtr fresh = allocator.allocate(0, 40 * kMiB, stream0());
    if (source.allocations.load() != allocations + 1) _exit(14);
    fresh = DataPtr();
    allocator.emptyCache();  // the child's own segment does go back
    if (source.frees.load() != frees + 1) _exit(15);
    _exit(0);
  }
  EXPECT_EQ(waitForChild(child), 0)
      << "10: an inherited segment was released; 11-13: figures; 14: inherited "
         "memory was handed out again; 15: the child's own segment was kept";
  // The parent is untouched: its frees and emptyCache work as ever.
  small = DataPtr();
  large = DataPtr();
  const int frees = source.frees.load();
  allocator.emptyCache();
  EXPECT_EQ(source.frees.load(), frees + 3);
}

// The same for an expandable segment: a child neither unmaps the parent's
// pages nor gives its address range back, nor grows it.
TEST(CachingAllocatorFork, ChildNeverUnmapsOrGrowsAnInheritedExpandableSegment) {
  FakeSegmentSource source(std::size_t{1} << 30, /*events=*/false,
                           /*page_size=*/2 * kMiB);
  AllocatorSettings settings;
  settings.expandable_segments = true;
  CachingAllocator allocator(DeviceType::CUDA, 1, source, settings);
  DataPtr kept = allocator.allocate(0, 6 * kMiB, stream0());
  { DataPtr cached = allocator.allocate(0, 8 * kMiB, stream0()); }  // mapped, free
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    const std::size_t mapped = source.mapped();
    const int reservations = source.reservations.load();
    kept = DataPtr();
    allocator.emptyCache();
    if (source.mapped() != mapped) _exit(20);
    if (source.range_releases.load() != 0) _exit(21);
    DataPtr fresh = allocator.allocate(0, 6 * kMiB, stream0());
    if (source.reservations.load() != reservations + 1) _exit(22);  // a range of its own
    fresh = DataPtr();
    allocator.emptyCache();
    if (source.mapped() != mapped || source.range_releases.load() != 1) _exit(23);
    _exit(0);
  }
  EXPECT_EQ(waitForChild(child), 0)
      << "20: inherited pages unmapped; 21: inherited range released; 22: the "
         "inherited segment grew; 23: the child's own segment was kept";
  kept = DataPtr();
  allocator.emptyCache();
  EXPECT_EQ(source.mapped(), 0u);
}

}  // namespace
}  // namespace accel::memory
