#include "driver.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>

#include <new>
#include <string>

#include "accel/adapter/fork_safe_lazy.h"

namespace accel::cuda::detail {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

template <typename Fn>
bool resolve(void* library, const char* name, Fn& fn) noexcept {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  return fn != nullptr;
}

std::string versionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// The virtual memory functions: all or none (a partial set is unusable).
void resolveVirtualMemory(void* library, Driver& d) {
  const auto want = [&](const char* name, auto& fn) {
    if (resolve(library, name, fn)) return;
    if (!d.vmm_missing.empty()) d.vmm_missing += ", ";
    d.vmm_missing += name;
  };
  want("cuMemGetAllocationGranularity", d.memGetAllocationGranularity);
  want("cuMemAddressReserve", d.memAddressReserve);
  want("cuMemAddressFree", d.memAddressFree);
  want("cuMemCreate", d.memCreate);
  want("cuMemMap", d.memMap);
  want("cuMemSetAccess", d.memSetAccess);
  want("cuMemUnmap", d.memUnmap);
  want("cuMemRelease", d.memRelease);
  if (d.vmm_missing.empty()) return;
  d.memGetAllocationGranularity = nullptr;
  d.memAddressReserve = nullptr;
  d.memAddressFree = nullptr;
  d.memCreate = nullptr;
  d.memMap = nullptr;
  d.memSetAccess = nullptr;
  d.memUnmap = nullptr;
  d.memRelease = nullptr;
}

void probe(Driver& d) {
  // RTLD_LOCAL: the runtime opens the same library itself; sharing our handle's
  // symbols with the rest of the process is not needed.
  void* library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    d.reason = std::string("no NVIDIA driver: ") + kDriverLibrary + " not found (" +
               (why != nullptr ? why : "dlopen failed") +
               "); install the NVIDIA driver to use the cuda backend";
    return;
  }
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driverGetVersion)(int*) = nullptr;
  CUresult (*deviceGetCount)(int*) = nullptr;
  if (!resolve(library, "cuInit", init) ||
      !resolve(library, "cuDriverGetVersion", driverGetVersion) ||
      !resolve(library, "cuDeviceGetCount", deviceGetCount)) {
    d.reason = std::string(kDriverLibrary) +
               " lacks cuInit/cuDriverGetVersion/cuDeviceGetCount: not a usable "
               "NVIDIA driver";
    return;
  }
  resolve(library, "cuGetErrorName", d.getErrorName);
  if (driverGetVersion(&d.driver_version) != CUDA_SUCCESS) d.driver_version = 0;
  if (!driverSupportsRuntime(d.driver_version, CUDART_VERSION)) {
    d.reason = driverTooOldReason(d.driver_version, CUDART_VERSION);
    return;
  }
  // Load kernels on first launch, not all at context creation (the default
  // since CUDA 12.2; set for the record and for older drivers). The driver
  // reads it in cuInit, so before it; a value the user set is kept. The
  // probe runs once, before any other CUDA call of the plugin.
  ::setenv("CUDA_MODULE_LOADING", "LAZY", /*overwrite=*/0);
  // cuInit loads the driver's state but creates no context.
  if (const CUresult result = init(0); result != CUDA_SUCCESS) {
    d.reason = result == CUDA_ERROR_NO_DEVICE
                   ? std::string(
                         "driver present, 0 devices (cuInit: CUDA_ERROR_NO_DEVICE; "
                         "check CUDA_VISIBLE_DEVICES)")
                   : "driver present, but cuInit failed: " + driverErrorName(d, result);
    return;
  }
  int count = 0;
  if (const CUresult result = deviceGetCount(&count); result != CUDA_SUCCESS) {
    d.reason =
        "driver present, but cuDeviceGetCount failed: " + driverErrorName(d, result);
    return;
  }
  if (count <= 0) {
    d.reason = "driver present, 0 devices (check CUDA_VISIBLE_DEVICES)";
    return;
  }
  if (!resolve(library, "cuDeviceGet", d.deviceGet) ||
      !resolve(library, "cuDevicePrimaryCtxGetState", d.primaryCtxGetState) ||
      !resolve(library, "cuCtxGetCurrent", d.ctxGetCurrent) ||
      !resolve(library, "cuCtxSetCurrent", d.ctxSetCurrent) ||
      !resolve(library, "cuCtxGetDevice", d.ctxGetDevice) ||
      !resolve(library, "cuPointerGetAttribute", d.pointerGetAttribute)) {
    d.reason = std::string(kDriverLibrary) + " lacks a context or pointer query function";
    return;
  }
  resolve(library, "cuDeviceCanAccessPeer", d.deviceCanAccessPeer);
  resolve(library, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain);
  resolveVirtualMemory(library, d);
  d.device_count = count;
}

// What the first caller gets when even the Driver cannot be allocated.
const Driver kProbeWithoutMemory = [] {
  Driver d;
  d.reason = "the driver probe failed (out of memory)";
  return d;
}();

const Driver* probeDriver() noexcept {
  auto* d = new (std::nothrow) Driver();  // never destroyed
  if (d == nullptr) return &kProbeWithoutMemory;
  try {
    probe(*d);
    if (d->device_count == 0 && d->reason.empty()) d->reason = "no devices";
  } catch (...) {
    d->device_count = 0;
    try {
      d->reason = "the driver probe failed (out of memory)";
    } catch (...) {
    }
  }
  return d;
}

// A fork child's driver when the probe was running on another thread at
// the fork: dlopen or cuInit may be half done in the child, so it reports
// no devices and why.
const Driver* driverAbandonedByFork() noexcept {
  auto* d = new (std::nothrow) Driver();  // never destroyed
  if (d == nullptr) return &kProbeWithoutMemory;
  try {
    d->reason =
        "the NVIDIA driver was being probed on another thread when this process "
        "forked; a fork child cannot finish that. Use CUDA in the parent, or start "
        "workers with fork+exec (spawn)";
  } catch (...) {
  }
  return d;
}

// Not a function-local static: its guard, in progress while another thread
// runs the probe (dlopen, cuInit), would leave a fork child waiting for ever
// (docs/lifecycle.md; accel/adapter/fork_safe_lazy.h: the plugin's own,
// settled by its pthread_atfork child handler, nothing of libaccel.so).
constinit adapter::ForkSafeLazy<Driver> g_driver;

}  // namespace

bool driverSupportsRuntime(int driver_version, int runtime_version) noexcept {
  // CUDA's minor version compatibility: a runtime of CUDA X.y runs on any
  // driver of CUDA X.0 or later (CUDA Compatibility guide, "Minor Version
  // Compatibility"); features newer than the driver fail at their call.
  return driver_version > 0 && driver_version / 1000 >= runtime_version / 1000;
}

std::string driverTooOldReason(int driver_version, int runtime_version) {
  return "driver too old for CUDA " + std::to_string(runtime_version / 1000) +
         " runtime: the driver supports CUDA " +
         (driver_version > 0 ? versionText(driver_version) : std::string("(unknown)")) +
         ", the plugin needs " + std::to_string(runtime_version / 1000) +
         ".0 or later; update the NVIDIA driver";
}

std::string driverErrorName(const Driver& d, CUresult result) {
  const char* name = nullptr;
  if (d.getErrorName == nullptr || d.getErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
  return name;
}

const Driver& driver() noexcept {
  return g_driver.get<&probeDriver, &driverAbandonedByFork>();
}

}  // namespace accel::cuda::detail
