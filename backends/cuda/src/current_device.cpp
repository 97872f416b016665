#include "current_device.h"

#include <cuda_runtime_api.h>

#include "accel/error.h"
#include "cuda_error.h"
#include "driver.h"

namespace accel::cuda::detail {
namespace {

// The device setCurrentDevice chose while it had no context; -1 = none.
thread_local DeviceIndex t_target = -1;

const Driver& usableDriver() {
  const Driver& d = driver();
  ACCEL_CHECK(d.available(), NotAvailable,
              "the cuda backend is not available: ", d.reason);
  return d;
}

// The device of the calling thread's current context, or -1 without one.
DeviceIndex contextDevice(const Driver& d) noexcept {
  CUcontext context = nullptr;
  if (d.ctxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) return -1;
  CUdevice device = 0;
  if (d.ctxGetDevice(&device) != CUDA_SUCCESS) return -1;
  return static_cast<DeviceIndex>(device);  // CUdevice is the ordinal
}

}  // namespace

DeviceIndex currentDevice() {
  if (t_target >= 0) return t_target;
  const DeviceIndex device = contextDevice(usableDriver());
  return device >= 0 ? device : 0;
}

bool primaryContextActive(DeviceIndex index) noexcept {
  const Driver& d = driver();
  if (!d.available() || index < 0 || index >= d.device_count) return false;
  CUdevice device = 0;
  unsigned int flags = 0;
  int active = 0;
  if (d.deviceGet(&device, index) != CUDA_SUCCESS) return false;
  return d.primaryCtxGetState(device, &flags, &active) == CUDA_SUCCESS && active != 0;
}

void setCurrentDevice(DeviceIndex index) {
  (void)usableDriver();
  if (primaryContextActive(index)) {
    // The context exists: making it current creates nothing.
    checkCuda(cudaSetDevice(index),
              "cudaSetDevice (making the current device's context current)");
    t_target = -1;
  } else {
    t_target = index;
  }
}

DeviceContext::DeviceContext(DeviceIndex index) {
  const Driver& d = usableDriver();
  const bool isCurrent = currentDevice() == index;
  CUcontext saved = nullptr;
  if (!isCurrent && d.ctxGetCurrent(&saved) != CUDA_SUCCESS) saved = nullptr;
  checkCuda(cudaSetDevice(index), "cudaSetDevice (making the device's context current)");
  if (isCurrent) {
    t_target = -1;  // the target is real now
  } else {
    saved_ = saved;
    restore_ = true;
  }
}

DeviceContext::~DeviceContext() {
  if (restore_) (void)driver().ctxSetCurrent(static_cast<CUcontext>(saved_));
}

}  // namespace accel::cuda::detail
