// Expandable segments on a real GPU: a program of its own, because the
// device allocator reads ACCEL_ALLOC_CONF once, on its first use (ctest sets
// ACCEL_ALLOC_CONF=expandable_segments:true for it). Skips with the reason
// without a GPU; tests/cuda/page_mapping_test.cpp covers the bookkeeping and
// the error paths on the fake driver.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "accel/accel.h"
#include "accel/device_fill.h"
#include "gpu_support.h"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

accel::AcceleratorHooks& cuda() { return accel::cuda::registerBackend(); }

TEST(CudaGpuExpandable, SegmentGrowsInPlaceAndShrinksOnEmptyCache) {
  ACCEL_SKIP_WITHOUT_GPU();
  const char* conf = std::getenv("ACCEL_ALLOC_CONF");
  ASSERT_TRUE(conf != nullptr && std::strstr(conf, "expandable_segments:true") != nullptr)
      << "run through ctest (it sets ACCEL_ALLOC_CONF=expandable_segments:true)";
  accel::Allocator& allocator = cuda().getDeviceAllocator(0);
  cuda().emptyCache();
  const accel::MemoryStats before = cuda().memoryStats(0);
  ASSERT_EQ(before.reserved_bytes.current, 0);
  {
    accel::DataPtr a = allocator.allocate(3 * kMiB);
    const accel::MemoryStats one = cuda().memoryStats(0);
    EXPECT_GE(one.reserved_bytes.current, static_cast<std::int64_t>(3 * kMiB));
    EXPECT_EQ(one.segments.current, 1);
    accel::DataPtr b = allocator.allocate(40 * kMiB);
    const accel::MemoryStats two = cuda().memoryStats(0);
    EXPECT_EQ(two.segments.current, 1) << "the segment did not grow in place";
    EXPECT_GT(two.reserved_bytes.current, one.reserved_bytes.current);
    EXPECT_EQ(static_cast<char*>(b.get()), static_cast<char*>(a.get()) + 3 * kMiB);
    // The mapped pages are real device memory, readable and writable.
    ASSERT_EQ(cudaMemset(b.get(), 0x5A, 40 * kMiB), cudaSuccess);
    std::vector<unsigned char> back(4096);
    ASSERT_EQ(cudaMemcpy(back.data(), static_cast<char*>(b.get()) + 40 * kMiB - 4096,
                         back.size(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (unsigned char byte : back) ASSERT_EQ(byte, 0x5A);
    EXPECT_EQ(cuda().getDeviceFromPtr(b.get()),
              accel::Device(accel::DeviceType::CUDA, 0));
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cuda().emptyCache();
  const accel::MemoryStats after = cuda().memoryStats(0);
  EXPECT_EQ(after.reserved_bytes.current, 0) << "the pages were not unmapped";
  EXPECT_EQ(after.segments.current, 0) << "the address range was not released";
  EXPECT_GT(after.num_device_free, before.num_device_free);
}

// Pages freed while a capture is underway are unmapped only after the
// kernels queued before that still use them: on a GPU an unmapped page under
// a running kernel is an illegal-address fault, sticky for the process.
TEST(CudaGpuExpandable, PagesFreedDuringACaptureOutliveTheirKernels) {
  ACCEL_SKIP_WITHOUT_GPU();
  const accel::Stream stream = cuda().getNewStream(0);
  const accel::Stream capturing = cuda().getNewStream(0);
  cuda().emptyCache();
  {
    accel::StreamGuard guard(stream);
    accel::DataPtr block = cuda().getDeviceAllocator(0).allocate(64 * kMiB);
    for (int i = 0; i < 4; ++i)  // long enough to still run at the unmap
      accel::fillNormal(stream, static_cast<float*>(block.get()), 16 * kMiB);
  }
  accel::StreamGuard guard(capturing);
  const accel::GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  cuda().emptyCache();  // the pages wait for the capture's end
  cuda().graphCaptureEnd(graph);
  cuda().graphDestroy(graph);
  EXPECT_EQ(cudaStreamSynchronize(accel::cuda::nativeStream(stream)), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cuda().emptyCache();
  EXPECT_EQ(cuda().memoryStats(0).reserved_bytes.current, 0);
}

}  // namespace
