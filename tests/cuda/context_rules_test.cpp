// Work on one device creates no context on another: every runtime call on a
// thread without a current context would create device 0's primary context
// (the runtime's rule), so the backend makes the device it works for
// current first. A program of its own, so that nothing else has touched
// device 0 when it starts; runs on the runtime double (two devices).
#include <cuda.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "accel/accel.h"
#include "accel/cuda/cuda.h"

namespace {

bool primaryContextActive(int device) {
  unsigned int flags = 0;
  int active = 0;
  return cuDevicePrimaryCtxGetState(device, &flags, &active) == CUDA_SUCCESS &&
         active != 0;
}

TEST(CudaContextRules, WorkOnDeviceOneCreatesNoContextOnDeviceZero) {
  accel::AcceleratorHooks& cuda = accel::cuda::registerBackend();
  ASSERT_GE(cuda.deviceCount(), 2);
  ASSERT_FALSE(primaryContextActive(0)) << "something created device 0's context first";
  accel::EventId event = 0;
  // A thread that never chose a device: its first getNewStream(1) asks
  // CUDA for the priority range, on cuda:1.
  std::thread([&] { (void)cuda.getNewStream(1); }).join();
  EXPECT_FALSE(primaryContextActive(0))
      << "a first new stream on cuda:1 created cuda:0's context";
  std::thread([&] {
    cuda.setCurrentDevice(1);  // a target: no context yet
    { accel::DataPtr pinned = cuda.getPinnedMemoryAllocator().allocate(4096); }
    const accel::Stream stream = cuda.getNewStream(1);
    event = cuda.createEvent(1, {.enable_timing = true});
    cuda.recordEvent(event, stream);
    { accel::DataPtr block = cuda.getDeviceAllocator(1).allocate(1 << 20); }
  }).join();
  // A thread that never chose a device, nor has a context: event calls and
  // freeing the cache (cudaFree) on it.
  std::thread([&] {
    cuda.synchronizeEvent(event);
    EXPECT_TRUE(cuda.queryEvent(event));
    EXPECT_GE(cuda.elapsedTime(event, event), 0.0);
    cuda.destroyEvent(event);
    cuda.emptyCache();
  }).join();
  EXPECT_TRUE(primaryContextActive(1));
  EXPECT_FALSE(primaryContextActive(0)) << "work on cuda:1 created cuda:0's context";
}

// A copy to cuda:1 from a thread without a current context: the backend's
// check of the host side (cudaPointerGetAttributes, a runtime call) runs
// with cuda:1 current, not on the runtime's default device 0.
TEST(CudaContextRules, ACopyToDeviceOneCreatesNoContextOnDeviceZero) {
  accel::AcceleratorHooks& cuda = accel::cuda::registerBackend();
  ASSERT_GE(cuda.deviceCount(), 2);
  ASSERT_FALSE(primaryContextActive(0)) << "something created device 0's context first";
  std::thread([&] {
    const accel::Stream stream = cuda.getNewStream(1);
    accel::DataPtr block = cuda.getDeviceAllocator(1).allocate(4096);
    std::vector<unsigned char> host(4096, 7);
    cuda.copyHostToDevice(block.get(), host.data(), host.size(), stream);
    cuda.copyDeviceToHost(host.data(), block.get(), host.size(), stream);
    cuda.synchronizeStream(stream);
  }).join();
  EXPECT_FALSE(primaryContextActive(0)) << "a copy to cuda:1 created cuda:0's context";
}

}  // namespace
