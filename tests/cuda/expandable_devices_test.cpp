// Expandable segments on several devices, on the runtime double: devices
// with different allocation granularities (CUDA_DOUBLE_GRANULARITY_MIB=2,4,
// set by ctest with ACCEL_ALLOC_CONF=expandable_segments:true), and pages
// that a peer device reads. A program of its own: the allocator reads
// ACCEL_ALLOC_CONF and the page size once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "double_support.h"

namespace accel::cuda::testing {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Large enough for the large pool, whose segments are expandable.
constexpr std::size_t kBlock = 6 * kMiB;

void requireSettings() {
  const char* conf = std::getenv("ACCEL_ALLOC_CONF");
  const char* granularity = std::getenv("CUDA_DOUBLE_GRANULARITY_MIB");
  ASSERT_TRUE(conf != nullptr &&
              std::strstr(conf, "expandable_segments:true") != nullptr &&
              granularity != nullptr && std::string(granularity) == "2,4")
      << "run through ctest (it sets ACCEL_ALLOC_CONF and CUDA_DOUBLE_GRANULARITY_MIB)";
  ASSERT_GE(cuda().deviceCount(), 2);
}

TEST(CudaExpandableDevices, PagesAreWholeGranulesOfEveryDevice) {
  requireSettings();
  // cuda:1's granularity is 4 MiB: 2 MiB pages (cuda:0's) are refused by
  // cuMemCreate there.
  EXPECT_NE(cuda().showConfig().find("pages of 4194304 bytes"), std::string::npos)
      << cuda().showConfig();
  for (DeviceIndex device : {DeviceIndex{1}, DeviceIndex{0}}) {
    DataPtr block = cuda().getDeviceAllocator(device).allocate(kBlock);
    ASSERT_NE(block.get(), nullptr);
    EXPECT_EQ(cuda().memoryStats(device).segments.current, 1);
    EXPECT_EQ(cuda().getDeviceFromPtr(block.get()), Device(DeviceType::CUDA, device));
  }
  cuda().deviceSynchronize(0);
  cuda().deviceSynchronize(1);
  cuda().emptyCache();
  EXPECT_EQ(cuda().memoryStats(1).reserved_bytes.current, 0);
}

TEST(CudaExpandableDevices, PeersReadAndWriteExpandableMemory) {
  requireSettings();
  cuda_double_reset_violations();
  const Stream onZero = cuda().getNewStream(0);
  const Stream onOne = cuda().getNewStream(1);
  constexpr std::size_t kSmall = 512 * 1024;  // the small pool: cudaMalloc memory
  DataPtr pages;
  DataPtr other;
  {
    StreamGuard guard(onZero);
    pages = cuda().getDeviceAllocator(0).allocate(kBlock);
  }
  {
    StreamGuard guard(onOne);
    other = cuda().getDeviceAllocator(1).allocate(kSmall);
  }
  std::string bytes(kSmall, 'x');
  cuda().copyHostToDevice(pages.get(), bytes.data(), kSmall, onZero);
  cuda().synchronizeStream(onZero);
  // Work on cuda:1 reads and writes cuda:0's pages (mapped memory is
  // reachable only from the devices cuMemSetAccess named).
  cuda().copyDeviceToDevice(other.get(), pages.get(), kSmall, onOne);
  cuda().copyDeviceToDevice(static_cast<char*>(pages.get()) + kSmall, other.get(), kSmall,
                            onOne);
  cuda().synchronizeStream(onOne);
  std::string back(kSmall, '\0');
  cuda().copyDeviceToHost(back.data(), static_cast<char*>(pages.get()) + kSmall, kSmall,
                          onZero);
  cuda().synchronizeStream(onZero);
  EXPECT_TRUE(back == bytes) << "the bytes cuda:1 wrote did not arrive";
  int violations = 0;
  const std::string last = lastViolation(&violations);
  EXPECT_EQ(violations, 0) << last;
}

}  // namespace
}  // namespace accel::cuda::testing
