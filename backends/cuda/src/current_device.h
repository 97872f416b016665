// The calling thread's current CUDA device, kept without creating contexts.
//
// Since CUDA 12, cudaSetDevice creates the device's primary context at once
// (hundreds of MB of device memory, and the device is then "used" by this
// process). A framework sets the current device long before it does any work
// there (a DeviceGuard around an operation that may not touch the device at
// all), so setCurrentDevice only remembers the target per thread while the
// device has no primary context, and makes it current for real when the
// device has one. The first piece of work on the target (DeviceContext below)
// creates the context and makes it current for good.
//
// Thread-safety: per thread; every function touches only the calling
// thread's state and the driver's thread-safe queries.
#pragma once

#include "accel/device.h"

namespace accel::cuda::detail {

// The target set on this thread, else the device of the thread's current
// context, else 0. Creates nothing. Requires an available driver.
DeviceIndex currentDevice();

// Makes `index` this thread's current device (index already validated).
void setCurrentDevice(DeviceIndex index);

// True when device `index`'s primary context is active. Never throws; false
// when the driver is unavailable.
bool primaryContextActive(DeviceIndex index) noexcept;

// RAII: makes device `index`'s primary context current on this thread for
// work on that device, creating it if needed (the one place contexts are
// made). When `index` is the thread's current device, with cudaSetDevice,
// and the switch stays after the guard (the target becomes real); otherwise
// through the driver (the primary context retained once, made current with
// cuCtxSetCurrent), so that the runtime's per-thread device is left as it
// was, and the previous context is restored, whatever it was (none
// included). Throws DeviceError/NotAvailable from cudaSetDevice or the
// driver.
class DeviceContext {
 public:
  explicit DeviceContext(DeviceIndex index);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

 private:
  void* saved_ = nullptr;  // CUcontext to restore
  bool restore_ = false;
};

}  // namespace accel::cuda::detail
