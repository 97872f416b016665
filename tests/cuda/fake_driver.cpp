// A stand-in for libcuda.so.1 (built under that name in a directory of its
// own), so that the driver probe and the context-free hooks can be tested on
// machines without the NVIDIA driver.
//
//   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion reports (default 13000)
//   FAKE_CUDA_INIT=no_device  cuInit fails with CUDA_ERROR_NO_DEVICE
//   FAKE_CUDA_DEVICES         what cuDeviceGetCount reports (default 0)
// With devices, no primary context is active and no context is current;
// pointers in kFakeDeviceMemory are device memory of device 1, pointers in
// kFakePinnedMemory pinned host memory, anything else unknown to CUDA.
//
// Every function that could create a context, and cuGetProcAddress (how the
// CUDA runtime reaches the driver), is exported too and only counts its
// calls: fake_cuda_forbidden_calls() returns the count, so a test can show
// that the probes and the current-device hooks never got there.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The driver API's values (cuda.h is not included: its macros rename several
// of the functions defined here to their versioned names).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = std::uintptr_t;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr unsigned int CU_MEMORYTYPE_HOST = 1;
constexpr unsigned int CU_MEMORYTYPE_DEVICE = 2;

std::atomic<int> g_forbidden{0};

constexpr std::uintptr_t kFakeDeviceMemory = 0xD00000000000;
constexpr std::uintptr_t kFakePinnedMemory = 0xB00000000000;
constexpr std::uintptr_t kFakeSize = 0x10000;

int envInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

bool within(CUdeviceptr p, std::uintptr_t base) {
  return p >= base && p < base + kFakeSize;
}

}  // namespace

FAKE_EXPORT int fake_cuda_forbidden_calls() { return g_forbidden.load(); }

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  *version = envInt("FAKE_CUDA_DRIVER_VERSION", 13000);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuInit(unsigned int) {
  const char* mode = std::getenv("FAKE_CUDA_INIT");
  return mode != nullptr && std::strcmp(mode, "no_device") == 0 ? CUDA_ERROR_NO_DEVICE
                                                                : CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  *count = envInt("FAKE_CUDA_DEVICES", 0);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  *name = error == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= envInt("FAKE_CUDA_DEVICES", 0))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice, unsigned int* flags,
                                                int* active) {
  *flags = 0;
  *active = 0;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext* context) {
  *context = nullptr;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetDevice(CUdevice*) { return CUDA_ERROR_INVALID_CONTEXT; }

FAKE_EXPORT CUresult cuPointerGetAttribute(void* data, int attribute,
                                           CUdeviceptr pointer) {
  const bool device = within(pointer, kFakeDeviceMemory);
  if (!device && !within(pointer, kFakePinnedMemory)) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) =
          device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = device ? 1 : 0;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// Forbidden: they create or switch contexts, or are how the runtime starts.
FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext) {
  ++g_forbidden;
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext*, CUdevice) {
  ++g_forbidden;
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuCtxCreate_v2(CUcontext*, unsigned int, CUdevice) {
  ++g_forbidden;
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuGetProcAddress(const char*, void**, int, std::uint64_t, void*) {
  ++g_forbidden;
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuGetProcAddress_v2(const char*, void**, int, std::uint64_t, void*) {
  ++g_forbidden;
  return CUDA_ERROR_NOT_SUPPORTED;
}
