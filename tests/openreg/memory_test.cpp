// openreg device memory: allocation through the core caching allocator
// (caching, accounting, the OOM path, history, expandable segments), copies,
// bounds checks, protection against host access, pinned host memory.
#include <gmock/gmock.h>
#include <sys/mman.h>

#include <atomic>
#include <numeric>
#include <string>

#include "openreg_test_support.h"
#include "support/error_of.h"
#include "support/sizes.h"

namespace {

using openreg_test::OpenRegTest;
using openreg_test::readBack;
using openreg_test::upload;

constexpr std::size_t kPage = 4096;
using accel::testing::kMiB;
constexpr std::int64_t kSmallSegment = 2 << 20;   // the small pool's segments
constexpr std::int64_t kLargeSegment = 20 << 20;  // for 1..10 MiB requests

using OpenRegMemoryTest = OpenRegTest;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;

// Checks the statistics of a device around one allocation that failed with
// OutOfMemory: counted once, after one retry that released the cache.
void expectOneOomAfterReleasingTheCache(const accel::MemoryStats& before,
                                        const accel::MemoryStats& after) {
  EXPECT_EQ(after.num_ooms, before.num_ooms + 1);
  EXPECT_EQ(after.num_alloc_retries, before.num_alloc_retries + 1);
  EXPECT_EQ(after.reserved_bytes.current, 0);  // the retry freed the cache
}

TEST_F(OpenRegMemoryTest, AllocationIsOnTheRequestedDeviceAndAlignedTo512Bytes) {
  accel::DataPtr a = accel::openreg::allocate(100, 3);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.device(), openreg_test::device(3));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % 512, 0u);
  EXPECT_TRUE(accel::openreg::isDevicePointer(a.get()));
  EXPECT_EQ(hooks().getDeviceFromPtr(a.get()), openreg_test::device(3));
}

TEST_F(OpenRegMemoryTest, ZeroByteAllocationIsEmptyButOnTheDevice) {
  accel::DataPtr a = hooks().getDeviceAllocator(1).allocate(0);
  EXPECT_FALSE(a);
  EXPECT_EQ(a.device(), openreg_test::device(1));
}

TEST_F(OpenRegMemoryTest, CurrentDeviceAllocatorFollowsTheCurrentDevice) {
  accel::DeviceGuard guard(openreg_test::device(2));
  accel::DataPtr a = accel::openreg::allocate(10);
  EXPECT_EQ(a.device(), openreg_test::device(2));
  EXPECT_EQ(hooks().getDeviceAllocator().device(), openreg_test::device(2));
}

TEST_F(OpenRegMemoryTest, StatsCountExactBytesPeaksAndCountsOfTheCache) {
  hooks().emptyCache();  // device 4 starts with nothing cached
  const accel::MemoryStats before = hooks().memoryStats(4);
  hooks().resetPeakMemoryStats(4);
  {
    accel::DataPtr a = accel::openreg::allocate(100, 4);
    accel::DataPtr b = accel::openreg::allocate(kPage + 1, 4);
    const accel::MemoryStats during = hooks().memoryStats(4);
    // Rounded to 512 bytes; each carved from a 2 MiB small-pool segment: a
    // 512 B block from its uniform pool's, the other from the small pool's.
    EXPECT_EQ(during.allocated_bytes.current - before.allocated_bytes.current,
              512 + 4608);
    EXPECT_EQ(during.requested_bytes.current - before.requested_bytes.current,
              static_cast<std::int64_t>(100 + kPage + 1));
    EXPECT_EQ(during.allocations.current - before.allocations.current, 2);
    EXPECT_EQ(during.segments.current - before.segments.current, 2);
    EXPECT_EQ(during.reserved_bytes.current - before.reserved_bytes.current,
              2 * kSmallSegment);
    EXPECT_EQ(during.active_bytes.current, during.allocated_bytes.current);
    EXPECT_EQ(during.num_device_alloc - before.num_device_alloc, 2);
  }
  const accel::MemoryStats after = hooks().memoryStats(4);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.allocated_bytes.peak - before.allocated_bytes.current, 512 + 4608);
  EXPECT_EQ(after.allocated_bytes.freed - before.allocated_bytes.freed, 512 + 4608);
  // Freed blocks stay cached: the segments are still reserved...
  EXPECT_EQ(after.reserved_bytes.current - before.reserved_bytes.current,
            2 * kSmallSegment);
  EXPECT_EQ(after.num_device_free, before.num_device_free);
  // ...and the next allocation reuses it without asking the device.
  { accel::DataPtr again = accel::openreg::allocate(100, 4); }
  EXPECT_EQ(hooks().memoryStats(4).num_device_alloc, after.num_device_alloc);
  hooks().resetPeakMemoryStats(4);
  EXPECT_EQ(hooks().memoryStats(4).allocated_bytes.peak, after.allocated_bytes.current);
  // emptyCache gives the segments back.
  hooks().emptyCache();
  const accel::MemoryStats emptied = hooks().memoryStats(4);
  EXPECT_EQ(emptied.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(emptied.num_device_free - before.num_device_free, 2);
}

TEST_F(OpenRegMemoryTest, OutOfMemoryGoesThroughTheAllocatorsOomPathWithAllFigures) {
  static std::atomic<int> observed{0};
  static std::atomic<std::size_t> observed_requested{0};
  hooks().attachOutOfMemoryObserver([](const accel::OutOfMemoryEvent& event) {
    if (event.device != 5) return;
    observed.fetch_add(1);
    observed_requested.store(event.requested_bytes);
  });
  hooks().emptyCache();
  { accel::DataPtr cached = accel::openreg::allocate(8 * kMiB, 5); }
  const accel::MemoryStats before = hooks().memoryStats(5);
  EXPECT_EQ(before.reserved_bytes.current, kLargeSegment);  // cached, unused
  const int calls = observed.load();
  // 65 MiB on a 64 MiB device.
  const std::string message = accel::testing::errorOf<accel::OutOfMemory>(
      [] { (void)accel::openreg::allocate(65 * kMiB, 5); });
  for (const char* figure :
       {"openreg:5 is out of memory. Tried to allocate 65.00 MiB", "Capacity: 64.00 MiB",
        "free: 64.00 MiB", "allocated: 0 B", "reserved but unallocated: 0 B",
        "in private pools: 0 B", "ACCEL_OPENREG_MEMORY"}) {
    EXPECT_THAT(message, HasSubstr(figure));
  }
  expectOneOomAfterReleasingTheCache(before, hooks().memoryStats(5));
  EXPECT_EQ(observed.load(), calls + 1);
  EXPECT_EQ(observed_requested.load(), 65 * kMiB);
}

TEST_F(OpenRegMemoryTest, TheOomRetryFreesCachedSegmentsSoOneAllocationCanTakeTheDevice) {
  // 15 × 4 MiB fill three 20 MiB segments; freed, they stay cached (60 MiB
  // reserved), so 64 MiB fits only after the retry returns them and the
  // device's free ranges coalesce again.
  std::vector<accel::DataPtr> pieces;
  for (int i = 0; i < 15; ++i) pieces.push_back(accel::openreg::allocate(4 * kMiB, 6));
  EXPECT_EQ(hooks().memoryStats(6).segments.current, 3);
  for (std::size_t i = 0; i < pieces.size(); i += 2) pieces[i].reset();
  for (std::size_t i = 1; i < pieces.size(); i += 2) pieces[i].reset();
  const accel::MemoryStats before = hooks().memoryStats(6);
  EXPECT_EQ(before.reserved_bytes.current, 3 * kLargeSegment);
  accel::DataPtr whole = accel::openreg::allocate(64 * kMiB, 6);
  EXPECT_TRUE(whole);
  const accel::MemoryStats after = hooks().memoryStats(6);
  EXPECT_EQ(after.num_alloc_retries, before.num_alloc_retries + 1);
  EXPECT_EQ(after.num_ooms, before.num_ooms);
  EXPECT_EQ(after.num_device_free - before.num_device_free, 3);
  EXPECT_EQ(after.reserved_bytes.current, static_cast<std::int64_t>(64 * kMiB));
}

TEST_F(OpenRegMemoryTest, HostToDeviceToHostRoundTrip) {
  std::vector<int> host(1000);
  std::iota(host.begin(), host.end(), 7);
  accel::DataPtr a = accel::openreg::allocate(host.size() * sizeof(int), 1);
  upload(a.get(), host);
  EXPECT_EQ(readBack<int>(a.get(), host.size()), host);
}

TEST_F(OpenRegMemoryTest, DeviceToDeviceCopyWorksAcrossDevices) {
  std::vector<double> host(300, 2.5);
  accel::DataPtr a = accel::openreg::allocate(host.size() * sizeof(double), 0);
  accel::DataPtr b = accel::openreg::allocate(host.size() * sizeof(double), 7);
  upload(a.get(), host);
  accel::openreg::copy(b.get(), a.get(), host.size() * sizeof(double));
  EXPECT_EQ(readBack<double>(b.get(), host.size()), host);
}

TEST_F(OpenRegMemoryTest, InteriorPointersCopyAndResolve) {
  accel::DataPtr a = accel::openreg::allocate(64 * sizeof(int), 2);
  upload(a.get(), std::vector<int>(64, 0));
  auto* middle = static_cast<int*>(a.get()) + 10;
  upload(middle, std::vector<int>{1, 2, 3});
  std::vector<int> back = readBack<int>(a.get(), 14);
  EXPECT_EQ((std::vector<int>(back.begin() + 9, back.end())),
            (std::vector<int>{0, 1, 2, 3, 0}));
  EXPECT_EQ(hooks().getDeviceFromPtr(middle), openreg_test::device(2));
}

TEST_F(OpenRegMemoryTest, AsyncCopiesRunInStreamOrder) {
  const accel::Stream stream = hooks().getNewStream(3);
  accel::DataPtr a = accel::openreg::allocate(sizeof(int) * 4, 3);
  std::vector<int> first{1, 2, 3, 4};
  std::vector<int> second{5, 6, 7, 8};
  std::vector<int> out(4);
  accel::openreg::copyAsync(a.get(), first.data(), 16, stream);
  accel::openreg::copyAsync(out.data(), a.get(), 16, stream);
  accel::openreg::copyAsync(a.get(), second.data(), 16, stream);
  hooks().synchronizeStream(stream);
  EXPECT_EQ(out, first);
  EXPECT_EQ(readBack<int>(a.get(), 4), second);
}

TEST_F(OpenRegMemoryTest, AsyncCopyReturnsBeforeTheCopyRuns) {
  const accel::Stream stream = hooks().getNewStream(1);
  openreg_test::Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  accel::DataPtr a = accel::openreg::allocate(4, 1);
  int value = 42;
  accel::openreg::copyAsync(a.get(), &value, sizeof(int), stream);
  EXPECT_FALSE(hooks().queryStream(stream));
  gate.open();
  hooks().synchronizeStream(stream);
  EXPECT_TRUE(hooks().queryStream(stream));
  EXPECT_EQ(readBack<int>(a.get(), 1)[0], 42);
}

TEST_F(OpenRegMemoryTest, SynchronousCopyWaitsForEarlierWorkOnTheCurrentStream) {
  const accel::Stream stream = hooks().getNewStream(2);
  accel::StreamGuard guard(stream);
  accel::DataPtr a = accel::openreg::allocate(sizeof(int), 2);
  int value = 9;
  accel::openreg::copyAsync(a.get(), &value, sizeof(int), stream);
  int out = 0;
  accel::openreg::copy(&out, a.get(), sizeof(int));
  EXPECT_EQ(out, 9);
}

TEST_F(OpenRegMemoryTest, CopyOutOfBoundsIsRejectedBeforeRunning) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 0);
  std::vector<char> host(kPage + 1);
  EXPECT_THROW(accel::openreg::copy(a.get(), host.data(), kPage + 1),
               accel::InvalidArgument);
  EXPECT_THROW(accel::openreg::copy(host.data(), static_cast<char*>(a.get()) + 1, kPage),
               accel::InvalidArgument);
}

TEST_F(OpenRegMemoryTest, CopyFromFreedMemoryIsRejected) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 0);
  void* stale = a.get();
  a.reset();
  int out = 0;
  EXPECT_THAT(accel::testing::errorOf<accel::InvalidArgument>(
                  [&] { accel::openreg::copy(&out, stale, sizeof(int)); }),
              AnyOf(HasSubstr("freed"), HasSubstr("not in any of its allocations")));
}

TEST_F(OpenRegMemoryTest, HostToHostCopyIsRejected) {
  int a = 1;
  int b = 2;
  EXPECT_THROW(accel::openreg::copy(&a, &b, sizeof(int)), accel::InvalidArgument);
}

TEST_F(OpenRegMemoryTest, AsyncCopyOnAnUninvolvedDeviceStreamIsRejected) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 0);
  int value = 1;
  EXPECT_THROW(accel::openreg::copyAsync(a.get(), &value, sizeof(int),
                                         hooks().getDefaultStream(1)),
               accel::InvalidArgument);
}

TEST_F(OpenRegMemoryTest, MemoryFreedWhileAStreamUsesItIsNotReusedUntilTheWorkIsDone) {
  const accel::Stream stream = hooks().getNewStream(6);
  openreg_test::Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  const accel::MemoryStats before = hooks().memoryStats(6);
  accel::DataPtr a = accel::openreg::allocate(kPage, 6);
  void* address = a.get();
  std::vector<char> host(kPage, 'x');
  accel::openreg::copyAsync(a.get(), host.data(), kPage, stream);
  a.reset();
  // The queued copy still names the block: it stays out of the cache.
  accel::MemoryStats pending = hooks().memoryStats(6);
  EXPECT_EQ(pending.active_bytes.current - before.active_bytes.current,
            static_cast<std::int64_t>(kPage));
  {
    accel::DataPtr other = accel::openreg::allocate(kPage, 6);
    EXPECT_NE(other.get(), address);
  }
  gate.open();
  hooks().synchronizeStream(stream);
  const accel::MemoryStats done = hooks().memoryStats(6);
  EXPECT_EQ(done.active_bytes.current, before.active_bytes.current);
  EXPECT_EQ(done.allocated_bytes.current, before.allocated_bytes.current);
  // Back in the cache: the next allocation of that size gets it again.
  accel::DataPtr again = accel::openreg::allocate(kPage, 6);
  EXPECT_EQ(again.get(), address);
}

TEST_F(OpenRegMemoryTest, MemoryFreedWhileQueuedWorkHoldsItIsReportedAsUseAfterFree) {
  const accel::Stream stream = hooks().getNewStream(5);
  openreg_test::Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  accel::DataPtr a = accel::openreg::allocate(kPage, 5);
  void* stale = a.get();
  std::vector<char> host(kPage, 'x');
  accel::openreg::copyAsync(a.get(), host.data(), kPage, stream);
  a.reset();  // the queued copy keeps the block; the user's copy must not
  int out = 0;
  EXPECT_THAT(accel::testing::errorOf<accel::InvalidArgument>(
                  [&] { accel::openreg::copy(&out, stale, sizeof(int)); }),
              HasSubstr("already freed (use after free)"));
  gate.open();
  hooks().synchronizeStream(stream);
}

TEST_F(OpenRegMemoryTest, GetDeviceFromPtrAnswersFromTheAllocatorsSegments) {
  accel::DataPtr a = accel::openreg::allocate(3 * kMiB, 4);
  void* inside = static_cast<char*>(a.get()) + 3 * kMiB - 1;
  EXPECT_EQ(hooks().getDeviceFromPtr(inside), openreg_test::device(4));
  a.reset();
  EXPECT_EQ(hooks().getDeviceFromPtr(inside), openreg_test::device(4));  // cached
  hooks().emptyCache();
  // The core answers pointer queries for a plugin's memory from its cache.
  EXPECT_THAT(accel::testing::errorOf<accel::InvalidArgument>(
                  [&] { (void)hooks().getDeviceFromPtr(inside); }),
              AllOf(HasSubstr("is not device memory of 'openreg'"),
                    HasSubstr("no segment of its caching allocator holds it")));
}

TEST_F(OpenRegMemoryTest, BlocksSharingAPageCanBeUsedByOperationsAtOnce) {
  // 512-byte blocks share pages; opening one for a copy and closing it must
  // not close the page under a neighbour that an operation still uses.
  const accel::Stream stream = hooks().getNewStream(2);
  accel::DataPtr left = accel::openreg::allocate(512, 2);
  accel::DataPtr right = accel::openreg::allocate(512, 2);
  openreg_test::Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  std::vector<int> values(128, 5);
  accel::openreg::copyAsync(right.get(), values.data(), 512, stream);
  upload(left.get(), std::vector<int>(128, 3));  // opens and closes left
  gate.open();
  hooks().synchronizeStream(stream);
  EXPECT_EQ(readBack<int>(left.get(), 128), std::vector<int>(128, 3));
  EXPECT_EQ(readBack<int>(right.get(), 128), values);
}

TEST_F(OpenRegMemoryTest, HistoryAndSnapshotComeFromTheCachingAllocator) {
  hooks().recordMemoryHistory({accel::HistoryRecording::All});
  void* address = nullptr;
  {
    accel::DataPtr a = accel::openreg::allocate(1000, 7);
    address = a.get();
    const accel::MemorySnapshot snapshot = hooks().memorySnapshot({.device = 7});
    bool found = false;
    for (const accel::MemorySegment& segment : snapshot.segments) {
      for (const accel::MemoryBlock& block : segment.blocks) {
        if (block.address == reinterpret_cast<std::uintptr_t>(address)) {
          found = true;
          EXPECT_EQ(segment.device, openreg_test::device(7));
          EXPECT_EQ(block.requested_size, 1000u);
          EXPECT_EQ(block.state, accel::MemoryBlock::State::Allocated);
        }
      }
    }
    EXPECT_TRUE(found);
  }
  const accel::MemorySnapshot snapshot = hooks().memorySnapshot({.device = 7});
  hooks().recordMemoryHistory({accel::HistoryRecording::Off});
  int allocs = 0;
  int frees = 0;
  for (const auto& trace : snapshot.device_traces) {
    for (const accel::MemoryTraceEntry& entry : trace) {
      if (entry.address != reinterpret_cast<std::uintptr_t>(address)) continue;
      if (entry.action == accel::MemoryTraceEntry::Action::Alloc) ++allocs;
      if (entry.action == accel::MemoryTraceEntry::Action::FreeCompleted) ++frees;
    }
  }
  EXPECT_EQ(allocs, 1);
  EXPECT_EQ(frees, 1);
}

TEST_F(OpenRegMemoryTest, HostReadOfDeviceMemoryKillsTheProcessWithSigsegv) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 0);
  upload(a.get(), std::vector<int>(kPage / sizeof(int), 1));
  const int status = openreg_test::runInChild([p = a.get()] {
    volatile int value = *static_cast<volatile int*>(p);
    (void)value;
  });
  EXPECT_TRUE(openreg_test::killedBySegv(status)) << "wait status " << status;
}

TEST_F(OpenRegMemoryTest, HostReadOfHostMemoryInTheSameChildHarnessSucceeds) {
  // The control for the test above: the harness itself does not crash.
  static int host_value = 3;
  const int status = openreg_test::runInChild([] {
    volatile int value = *static_cast<volatile int*>(&host_value);
    (void)value;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

TEST_F(OpenRegMemoryTest, UnallocatedDeviceAddressesAlsoFault) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 7);
  void* beyond = static_cast<char*>(a.get()) + (std::size_t{32} << 20);
  const int status =
      openreg_test::runInChild([beyond] { static_cast<volatile char*>(beyond)[0] = 1; });
  EXPECT_TRUE(openreg_test::killedBySegv(status)) << "wait status " << status;
}

TEST_F(OpenRegMemoryTest, ForeignPointersAreRejectedByGetDeviceFromPtr) {
  int on_stack = 0;
  EXPECT_THROW((void)hooks().getDeviceFromPtr(&on_stack), accel::InvalidArgument);
  EXPECT_THROW((void)hooks().getDeviceFromPtr(nullptr), accel::InvalidArgument);
  EXPECT_FALSE(accel::openreg::isDevicePointer(&on_stack));
}

TEST_F(OpenRegMemoryTest, PinnedMemoryIsPageAlignedTrackedAndUsableForCopies) {
  accel::Allocator& pinned = hooks().getPinnedMemoryAllocator();
  EXPECT_EQ(&pinned, &accel::globalContext().getPinnedMemoryAllocator(
                         accel::openreg::deviceType()));
  EXPECT_TRUE(pinned.device().isCpu());
  accel::DataPtr host = pinned.allocate(3 * sizeof(int));
  ASSERT_TRUE(host);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(host.get()) % kPage, 0u);
  EXPECT_TRUE(hooks().isPinnedPtr(host.get()));
  EXPECT_TRUE(hooks().isPinnedPtr(static_cast<char*>(host.get()) + 5));
  EXPECT_THROW((void)hooks().getDeviceFromPtr(host.get()), accel::InvalidArgument);
  int* values = static_cast<int*>(host.get());
  values[0] = 4;
  values[1] = 5;
  values[2] = 6;
  accel::DataPtr device = accel::openreg::allocate(3 * sizeof(int), 1);
  accel::openreg::copy(device.get(), values, 3 * sizeof(int));
  EXPECT_EQ(readBack<int>(device.get(), 3), (std::vector<int>{4, 5, 6}));
  void* freed = host.get();
  host.reset();
  // Freed pinned blocks stay pinned in the core's pinned cache for reuse.
  EXPECT_TRUE(hooks().isPinnedPtr(freed));
  int on_stack = 0;
  EXPECT_FALSE(hooks().isPinnedPtr(&on_stack));
  EXPECT_FALSE(hooks().isPinnedPtr(device.get()));
}

TEST_F(OpenRegMemoryTest, EmptyCacheReturnsUnusedSegmentsAndKeepsLiveData) {
  accel::DataPtr keep = accel::openreg::allocate(sizeof(int), 3);
  upload(keep.get(), std::vector<int>{77});
  { accel::DataPtr scratch = accel::openreg::allocate(8 * kMiB, 3); }
  const accel::MemoryStats before = hooks().memoryStats(3);
  hooks().emptyCache();
  const accel::MemoryStats after = hooks().memoryStats(3);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  // The scratch block's 20 MiB segment went back; keep's small segment stays.
  EXPECT_EQ(after.reserved_bytes.current, kSmallSegment);
  EXPECT_GE(after.num_device_free - before.num_device_free, 1);
  EXPECT_EQ(readBack<int>(keep.get(), 1)[0], 77);
}

TEST_F(OpenRegMemoryTest, InjectedAllocationFailureTakesTheAllocatorsOomPath) {
  static std::atomic<int> observed{0};
  hooks().attachOutOfMemoryObserver([](const accel::OutOfMemoryEvent& event) {
    if (event.device == 0 && event.requested_bytes == 1536) observed.fetch_add(1);
  });
  hooks().emptyCache();
  { accel::DataPtr cached = accel::openreg::allocate(100, 0); }
  const accel::MemoryStats before = hooks().memoryStats(0);
  EXPECT_EQ(before.reserved_bytes.current, kSmallSegment);
  accel::openreg::failNthAllocation(1);
  // 1500 bytes would fit in the cached segment.
  EXPECT_THAT(accel::testing::errorOf<accel::OutOfMemory>(
                  [] { (void)accel::openreg::allocate(1500, 0); }),
              AllOf(HasSubstr("fault injection"), HasSubstr("Capacity: 64.00 MiB")));
  expectOneOomAfterReleasingTheCache(before, hooks().memoryStats(0));
  EXPECT_EQ(observed.load(), 1);
  EXPECT_NO_THROW((void)accel::openreg::allocate(1500, 0));
}

// Allocates and frees 24, 36, 48 and 60 MiB in turn on `device`: the growing
// batch shapes that leave one cached segment per shape without expandable
// segments.
void allocateGrowingShapes(accel::DeviceIndex device) {
  for (std::size_t mib : {24, 36, 48, 60}) {
    accel::DataPtr batch = accel::openreg::allocate(mib * kMiB, device);
    upload(batch.get(), std::vector<int>(16, 1));
  }
}

TEST_F(OpenRegMemoryTest,
       ExpandableSegmentsGrowOneMappedRangeInsteadOfOneSegmentPerShape) {
  hooks().emptyCache();
  const accel::MemoryStats before = hooks().memoryStats(1);
  allocateGrowingShapes(1);
  const accel::MemoryStats after = hooks().memoryStats(1);
  if (std::getenv("OPENREG_MEMORY_CHILD") == nullptr) {
    // Fixed segments: 24 + 36 MiB stay cached, so 48 and then 60 MiB each
    // find the device full and must first free the cache.
    EXPECT_EQ(after.num_alloc_retries - before.num_alloc_retries, 2);
    EXPECT_EQ(after.num_device_alloc - before.num_device_alloc, 4);
    // The allocator reads ACCEL_ALLOC_CONF once, at init: a fresh process.
    const int status = openreg_test::runTestInFreshProcess(
        "OpenRegMemoryTest."
        "ExpandableSegmentsGrowOneMappedRangeInsteadOfOneSegmentPerShape",
        {"OPENREG_MEMORY_CHILD=1", "ACCEL_ALLOC_CONF=expandable_segments:true"},
        {"OPENREG_MEMORY_CHILD=", "ACCEL_ALLOC_CONF="});
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the run with expandable_segments:true failed; wait status " << status;
    return;
  }
  // Here with expandable_segments:true: one range, pages mapped as shapes grow.
  EXPECT_EQ(after.num_alloc_retries, before.num_alloc_retries);
  EXPECT_EQ(after.segments.current - before.segments.current, 1);
  EXPECT_EQ(after.reserved_bytes.current - before.reserved_bytes.current,
            static_cast<std::int64_t>(60 * kMiB));
  EXPECT_EQ(after.reserved_bytes.peak, static_cast<std::int64_t>(60 * kMiB));
  bool expandable = false;
  for (const accel::MemorySegment& segment :
       hooks().memorySnapshot({.device = 1, .include_trace = false}).segments) {
    expandable = expandable || segment.is_expandable;
  }
  EXPECT_TRUE(expandable);
  hooks().emptyCache();  // unmaps the free pages and gives the range back
  EXPECT_EQ(hooks().memoryStats(1).reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(hooks().memoryStats(1).segments.current, before.segments.current);
}

TEST_F(OpenRegMemoryTest, FreeingAfterTheDeviceIsLostDoesNotThrow) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 5);
  accel::openreg::loseDeviceAfter(5, 0);
  EXPECT_NO_THROW(a.reset());
}

}  // namespace
