// Probes create no CUDA context: checked in a fresh process (this program
// runs nothing else) against the driver itself, opened here with dlopen.
// Skips with the reason without a usable CUDA device.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <vector>

#include "accel/accel.h"
#include "gpu_support.h"

namespace {

// cuDevicePrimaryCtxGetState of device 0, straight from libcuda.
bool driverSaysContextActive() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return false;
  auto getState = reinterpret_cast<CUresult (*)(CUdevice, unsigned int*, int*)>(
      dlsym(library, "cuDevicePrimaryCtxGetState"));
  auto deviceGet =
      reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(library, "cuDeviceGet"));
  CUdevice device = 0;
  unsigned int flags = 0;
  int active = 0;
  if (deviceGet(&device, 0) != CUDA_SUCCESS) return false;
  return getState(device, &flags, &active) == CUDA_SUCCESS && active != 0;
}

TEST(CudaGpuContext, ProbesAndTargetDeviceCreateNoContext) {
  ACCEL_SKIP_WITHOUT_GPU();
  accel::AcceleratorHooks& cuda = accel::cuda::registerBackend();
  ASSERT_FALSE(driverSaysContextActive())
      << "something created a context before the test";
  EXPECT_GT(cuda.deviceCount(), 0);
  EXPECT_FALSE(cuda.hasPrimaryContext(0));
  std::vector<char> host(64);
  EXPECT_FALSE(cuda.isPinnedPtr(host.data()));
  cuda.setCurrentDevice(0);
  EXPECT_EQ(cuda.getCurrentDevice(), 0);
  (void)cuda.showConfig();
  EXPECT_FALSE(driverSaysContextActive());
  EXPECT_FALSE(cuda.hasPrimaryContext(0));

  // Work on the device creates it, and hasPrimaryContext follows.
  cuda.deviceSynchronize(0);
  EXPECT_TRUE(driverSaysContextActive());
  EXPECT_TRUE(cuda.hasPrimaryContext(0));
}

}  // namespace
