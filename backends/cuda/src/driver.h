// Driver: the CUDA driver library (libcuda.so.1), opened lazily with dlopen.
//
// The plugin never links libcuda: a machine without the NVIDIA driver must
// still load libaccel_cuda.so and hear "not available, because ...". The
// first probe opens the library, checks that the driver is new enough for
// the CUDA runtime the plugin was built with, calls cuInit (which creates no
// context) and counts the devices (cuDeviceGetCount, which honours
// CUDA_VISIBLE_DEVICES); any failure is kept as the reason for 0 devices.
// The outcome never changes after the first probe.
//
// Resolved here: the functions that create no context (the probes,
// primary-context state, pointer attributes) and, when the driver has them,
// the virtual memory functions behind expandable segments (page_mapping.h;
// the runtime has no equivalent). Everything else that does work goes through
// the CUDA runtime (linked statically; it opens the driver the same way, on
// its first call).
//
// Thread-safety: driver() is thread-safe (the probe runs once, through
// adapter::ForkSafeLazy: a fork child whose parent was probing on another thread
// gets a Driver without devices saying so, instead of waiting); the function
// pointers are immutable after it.
// Lifetime: never destroyed; the library is never closed.
#pragma once

#include <cuda.h>

#include <string>

namespace accel::cuda::detail {

struct Driver {
  // Devices visible to this process; 0 when unavailable.
  int device_count = 0;
  // Why device_count is 0, in words ("no NVIDIA driver: libcuda.so.1 not
  // found (...)"); empty when devices were found.
  std::string reason;
  // The driver's CUDA version (cuDriverGetVersion: 1000 * major + 10 * minor);
  // 0 when the library could not be opened.
  int driver_version = 0;

  // Resolved only when the driver loaded and cuInit succeeded.
  CUresult (*deviceGet)(CUdevice*, int) = nullptr;
  CUresult (*primaryCtxGetState)(CUdevice, unsigned int*, int*) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ctxGetDevice)(CUdevice*) = nullptr;
  CUresult (*pointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr) = nullptr;
  CUresult (*getErrorName)(CUresult, const char**) = nullptr;
  // Optional (null when missing: no peer is given access to expandable
  // segments). Creates no context.
  CUresult (*deviceCanAccessPeer)(int*, CUdevice, CUdevice) = nullptr;
  // Optional: retains (creating it when needed) a device's primary context.
  // Called only for work on a device (current_device.h), never by a probe;
  // without it, that work falls back to cudaSetDevice.
  CUresult (*primaryCtxRetain)(CUcontext*, CUdevice) = nullptr;

  // The virtual memory API (expandable segments), resolved with the rest;
  // all null when any is missing, which `vmm_missing` then names
  // ("cuMemCreate, cuMemMap"; empty when all were found).
  CUresult (*memGetAllocationGranularity)(size_t*, const CUmemAllocationProp*,
                                          CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*memAddressReserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr,
                                unsigned long long) = nullptr;
  CUresult (*memAddressFree)(CUdeviceptr, size_t) = nullptr;
  CUresult (*memCreate)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                        unsigned long long) = nullptr;
  CUresult (*memMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                     unsigned long long) = nullptr;
  CUresult (*memSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*memUnmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*memRelease)(CUmemGenericAllocationHandle) = nullptr;
  std::string vmm_missing;

  [[nodiscard]] bool available() const noexcept { return device_count > 0; }
};

// The driver, probed on first use. Never throws (an allocation failure
// during the probe is recorded as the reason).
const Driver& driver() noexcept;

// "CUDA_ERROR_NO_DEVICE" or "CUresult 999". Throws only bad_alloc.
std::string driverErrorName(const Driver& d, CUresult result);

// Whether a driver of CUDA `driver_version` runs a runtime of
// `runtime_version` (both 1000 * major + 10 * minor): the same major version
// or later. Pure; exposed for tests.
bool driverSupportsRuntime(int driver_version, int runtime_version) noexcept;

// The reason text for a driver whose version is below the runtime's, e.g.
// "driver too old for CUDA 13 runtime: the driver supports CUDA 12.4, the
// plugin needs 13.0 or later; update the NVIDIA driver". Pure; exposed for tests. Throws
// only bad_alloc.
std::string driverTooOldReason(int driver_version, int runtime_version);

}  // namespace accel::cuda::detail
