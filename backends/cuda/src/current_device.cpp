#include "current_device.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "accel/adapter/failure.h"
#include "cuda_error.h"
#include "driver.h"

namespace accel::cuda::detail {
namespace {

// The device setCurrentDevice chose while it had no context; -1 = none.
thread_local DeviceIndex t_target = -1;

const Driver& usableDriver() {
  const Driver& d = driver();
  ACCEL_ADAPTER_CHECK(d.available(), adapter::NotAvailable,
                      "'cuda' is not available: ", d.reason);
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

// Device `index`'s primary context, retained once for the process (the
// runtime keeps it too; never released, as the runtime never releases its
// own). Null when the driver lacks cuDevicePrimaryCtxRetain.
CUcontext retainedPrimaryContext(const Driver& d, DeviceIndex index) {
  if (d.primaryCtxRetain == nullptr) return nullptr;
  static std::mutex mutex;
  static auto* const retained = new std::vector<CUcontext>();  // never destroyed
  std::lock_guard lock(mutex);
  if (retained->empty())
    retained->assign(static_cast<std::size_t>(d.device_count), nullptr);
  CUcontext& context = (*retained)[static_cast<std::size_t>(index)];
  if (context != nullptr) return context;
  CUdevice device = 0;
  CUresult result = d.deviceGet(&device, index);
  if (result == CUDA_SUCCESS) result = d.primaryCtxRetain(&context, device);
  ACCEL_ADAPTER_CHECK(
      result == CUDA_SUCCESS, adapter::DeviceError,
      "cuDevicePrimaryCtxRetain (making cuda:", static_cast<int>(index),
      "'s context current for work there) failed: ", driverErrorName(d, result));
  return context;
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
  if (currentDevice() == index) {
    checkCuda(cudaSetDevice(index),
              "cudaSetDevice (making the device's context current)");
    t_target = -1;  // the target is real now
    return;
  }
  CUcontext saved = nullptr;
  if (d.ctxGetCurrent(&saved) != CUDA_SUCCESS) saved = nullptr;
  // Work on another device than the thread's: its primary context is made
  // current through the driver, which the runtime uses as it finds it
  // (Programming Guide, "Interoperability between Runtime and Driver APIs").
  // cudaSetDevice would also switch the runtime's per-thread device, which
  // restoring the context does not switch back: the caller's next plain
  // runtime call on a thread without a context would go to this device.
  if (CUcontext primary = retainedPrimaryContext(d, index)) {
    const CUresult result = d.ctxSetCurrent(primary);
    ACCEL_ADAPTER_CHECK(result == CUDA_SUCCESS, adapter::DeviceError,
                        "cuCtxSetCurrent (making cuda:", static_cast<int>(index),
                        "'s context current) failed: ", driverErrorName(d, result));
  } else {
    checkCuda(cudaSetDevice(index),
              "cudaSetDevice (making the device's context current)");
  }
  saved_ = saved;
  restore_ = true;
}

DeviceContext::~DeviceContext() {
  if (restore_) (void)driver().ctxSetCurrent(static_cast<CUcontext>(saved_));
}

}  // namespace accel::cuda::detail
