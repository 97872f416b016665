// openreg device memory: allocation, accounting, copies, bounds checks,
// protection against host access, pinned host memory.
#include <sys/mman.h>

#include <numeric>

#include "openreg_test_support.h"

namespace {

using openreg_test::OpenRegTest;
using openreg_test::readBack;
using openreg_test::upload;

constexpr std::size_t kPage = 4096;

using OpenRegMemoryTest = OpenRegTest;

TEST_F(OpenRegMemoryTest, AllocationIsOnTheRequestedDeviceAndPageAligned) {
  accel::DataPtr a = accel::openreg::allocate(100, 3);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.device(), openreg_test::device(3));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % kPage, 0u);
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

TEST_F(OpenRegMemoryTest, StatsCountExactBytesPeaksAndCounts) {
  const accel::MemoryStats before = hooks().memoryStats(4);
  hooks().resetPeakMemoryStats(4);
  {
    accel::DataPtr a = accel::openreg::allocate(100, 4);
    accel::DataPtr b = accel::openreg::allocate(kPage + 1, 4);
    const accel::MemoryStats during = hooks().memoryStats(4);
    EXPECT_EQ(during.allocated_bytes.current - before.allocated_bytes.current,
              static_cast<std::int64_t>(3 * kPage));
    EXPECT_EQ(during.requested_bytes.current - before.requested_bytes.current,
              static_cast<std::int64_t>(100 + kPage + 1));
    EXPECT_EQ(during.allocations.current - before.allocations.current, 2);
    EXPECT_EQ(during.segments.current - before.segments.current, 2);
    EXPECT_EQ(during.active_bytes.current, during.allocated_bytes.current);
    EXPECT_EQ(during.num_device_alloc - before.num_device_alloc, 2);
  }
  const accel::MemoryStats after = hooks().memoryStats(4);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(after.allocated_bytes.peak - before.allocated_bytes.current,
            static_cast<std::int64_t>(3 * kPage));
  EXPECT_EQ(after.num_device_free - before.num_device_free, 2);
  EXPECT_EQ(after.allocated_bytes.freed - before.allocated_bytes.freed,
            static_cast<std::int64_t>(3 * kPage));
  hooks().resetPeakMemoryStats(4);
  EXPECT_EQ(hooks().memoryStats(4).allocated_bytes.peak, after.allocated_bytes.current);
}

TEST_F(OpenRegMemoryTest, OutOfMemoryIsReportedAndCounted) {
  const std::int64_t ooms = hooks().memoryStats(5).num_ooms;
  try {
    (void)accel::openreg::allocate(std::size_t{65} << 20, 5);
    FAIL() << "a 65 MiB allocation fit on a 64 MiB device";
  } catch (const accel::OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("openreg:5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ACCEL_OPENREG_MEMORY"), std::string::npos);
  }
  EXPECT_EQ(hooks().memoryStats(5).num_ooms, ooms + 1);
}

TEST_F(OpenRegMemoryTest, FreedMemoryIsCoalescedSoTheWholeDeviceCanBeAllocatedAgain) {
  std::vector<accel::DataPtr> pieces;
  for (int i = 0; i < 16; ++i)
    pieces.push_back(accel::openreg::allocate(std::size_t{4} << 20, 6));
  for (std::size_t i = 0; i < pieces.size(); i += 2) pieces[i].reset();
  for (std::size_t i = 1; i < pieces.size(); i += 2) pieces[i].reset();
  accel::DataPtr whole = accel::openreg::allocate(std::size_t{64} << 20, 6);
  EXPECT_TRUE(whole);
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
  try {
    accel::openreg::copy(&out, stale, sizeof(int));
    FAIL() << "a copy from freed memory was accepted";
  } catch (const accel::InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("freed") != std::string::npos ||
                what.find("not in any of its allocations") != std::string::npos)
        << what;
  }
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

TEST_F(OpenRegMemoryTest, MemoryFreedWhileAStreamUsesItStaysActiveUntilTheWorkIsDone) {
  const accel::Stream stream = hooks().getNewStream(6);
  openreg_test::Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  const accel::MemoryStats before = hooks().memoryStats(6);
  accel::DataPtr a = accel::openreg::allocate(kPage, 6);
  std::vector<char> host(kPage, 'x');
  accel::openreg::copyAsync(a.get(), host.data(), kPage, stream);
  a.reset();
  accel::MemoryStats pending = hooks().memoryStats(6);
  EXPECT_EQ(pending.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(pending.active_bytes.current - before.active_bytes.current,
            static_cast<std::int64_t>(kPage));
  gate.open();
  hooks().synchronizeStream(stream);
  EXPECT_EQ(hooks().memoryStats(6).active_bytes.current, before.active_bytes.current);
  EXPECT_EQ(hooks().memoryStats(6).reserved_bytes.current, before.reserved_bytes.current);
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

TEST_F(OpenRegMemoryTest, EmptyCacheKeepsLiveDataAndTheAccounting) {
  accel::DataPtr keep = accel::openreg::allocate(sizeof(int), 3);
  upload(keep.get(), std::vector<int>{77});
  { accel::DataPtr scratch = accel::openreg::allocate(std::size_t{8} << 20, 3); }
  const accel::MemoryStats before = hooks().memoryStats(3);
  hooks().emptyCache();
  const accel::MemoryStats after = hooks().memoryStats(3);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(readBack<int>(keep.get(), 1)[0], 77);
}

TEST_F(OpenRegMemoryTest, FreeingAfterTheDeviceIsLostDoesNotThrow) {
  accel::DataPtr a = accel::openreg::allocate(kPage, 5);
  accel::openreg::loseDeviceAfter(5, 0);
  EXPECT_NO_THROW(a.reset());
}

}  // namespace
