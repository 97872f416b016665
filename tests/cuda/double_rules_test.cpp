// Rules of the runtime double itself that no backend test would notice
// were they missing: misuse a GPU reports only later, as a fault (docs/cuda.md,
// "The runtime double").
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "current_device.h"
#include "double_support.h"
#include "fill_kernels.h"

namespace accel::cuda::testing {
namespace {

// The double checks every access a kernel makes, the Philox slot a captured
// fill reads included: a slot that was freed is a violation (an illegal
// address on a GPU), which fails any test (no_violations.cpp); this test
// takes it back after checking it was recorded.
TEST(CudaDouble, AFillReadingAFreedPhiloxSlotIsAViolation) {
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  DataPtr out = cuda().getDeviceAllocator(0).allocate(64 * sizeof(std::uint32_t));
  std::uint64_t* slot = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&slot), 2 * sizeof(std::uint64_t)),
            cudaSuccess);
  ASSERT_EQ(cudaFree(slot), cudaSuccess);
  accel::detail::FillJob job;
  job.kind = FillKind::Uint32;
  job.out = out.get();
  job.count = 64;
  ASSERT_EQ(detail::launchFill(job, slot, nativeStream(stream)), cudaSuccess);
  cuda().synchronizeStream(stream);
  int count = 0;
  const std::string text = lastViolation(&count);
  EXPECT_EQ(count, 1) << "the fill's read of a freed slot went unnoticed";
  EXPECT_NE(text.find("not allocated or mapped"), std::string::npos) << text;
  cuda_double_reset_violations();
}

// Launches a fill kernel writing `count` floats at `out` on `stream` (the
// kernel itself: the core's fills take memory of its caches only).
void launchFillKernel(Stream stream, float* out, std::size_t count) {
  accel::detail::FillJob job;
  job.kind = FillKind::UniformFloat;
  job.out = out;
  job.count = count;
  const detail::DeviceContext context(stream.device.index());
  ASSERT_EQ(detail::launchFill(job, nullptr, nativeStream(stream)), cudaSuccess);
}

// A kernel on cuda:1 reaches cuda:0's cudaMalloc memory only once cuda:1
// enabled peer access to cuda:0 (a copy needs no peer access).
TEST(CudaDouble, AKernelReachesAnotherDevicesMemoryOnlyAsAnEnabledPeer) {
  ASSERT_GE(cuda().deviceCount(), 2);
  const Stream onOne = cuda().getNewStream(1);
  float* onZero = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&onZero), 64 * sizeof(float)),
            cudaSuccess);
  launchFillKernel(onOne, onZero, 64);
  cuda().synchronizeStream(onOne);
  int count = 0;
  std::string text = lastViolation(&count);
  EXPECT_EQ(count, 1) << "a kernel reached another device's memory without peer access";
  EXPECT_NE(text.find("without peer access enabled"), std::string::npos) << text;
  cuda_double_reset_violations();
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessAlreadyEnabled);
  (void)cudaGetLastError();
  launchFillKernel(onOne, onZero, 64);
  cuda().synchronizeStream(onOne);
  text = lastViolation(&count);
  EXPECT_EQ(count, 0) << text;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaFree(onZero), cudaSuccess);
}

}  // namespace
}  // namespace accel::cuda::testing
