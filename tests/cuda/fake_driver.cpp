// A stand-in for libcuda.so.1 (built under that name in a directory of its
// own), so that the driver probe and the context-free hooks can be tested on
// machines without the NVIDIA driver.
//
//   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion reports (default 13000)
//   FAKE_CUDA_INIT=no_device  cuInit fails with CUDA_ERROR_NO_DEVICE
//   FAKE_CUDA_DEVICES         what cuDeviceGetCount reports (default 0)
// fake_cuda_hold_init(1) makes cuInit wait until fake_cuda_hold_init(0);
// fake_cuda_wait_for_held_init() returns once a cuInit waits so (a thread
// is inside the backend's probe).
// With devices, no primary context is active and no context is current;
// pointers in kFakeDeviceMemory are device memory of device 1, pointers in
// kFakePinnedMemory pinned host memory, anything else unknown to CUDA.
//
// The virtual memory API (cuMemAddressReserve ... cuMemRelease) keeps books
// only (addresses are never backed): fake_cuda_live_handles(),
// fake_cuda_mapped_pages() and fake_cuda_reserved_ranges() report them, and
// fake_cuda_fail(call, after, result) makes `call` ("cuMemCreate",
// "cuMemMap", "cuMemSetAccess", "cuMemAddressReserve") return `result` after
// `after` more successes, and on every later call until fake_cuda_fail("",
// 0, 0) clears it. Built with FAKE_CUDA_NO_VMM, the library lacks
// that API, like a driver too old for it.
//
// Every function that could create a context, and cuGetProcAddress (how the
// CUDA runtime reaches the driver), is exported too and only counts its
// calls: fake_cuda_forbidden_calls() returns the count, so a test can show
// that the probes and the current-device hooks never got there.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

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

namespace {
std::mutex g_hold_mutex;
std::condition_variable g_hold_changed;
bool g_hold_init = false;
bool g_init_held = false;
}  // namespace

FAKE_EXPORT void fake_cuda_hold_init(int hold) {
  {
    std::lock_guard<std::mutex> lock(g_hold_mutex);
    g_hold_init = hold != 0;
  }
  g_hold_changed.notify_all();
}

FAKE_EXPORT void fake_cuda_wait_for_held_init() {
  std::unique_lock<std::mutex> lock(g_hold_mutex);
  g_hold_changed.wait(lock, [] { return g_init_held; });
}

FAKE_EXPORT CUresult cuInit(unsigned int) {
  {
    std::unique_lock<std::mutex> lock(g_hold_mutex);
    if (g_hold_init) {
      g_init_held = true;
      g_hold_changed.notify_all();
      g_hold_changed.wait(lock, [] { return !g_hold_init; });
    }
  }
  const char* mode = std::getenv("FAKE_CUDA_INIT");
  return mode != nullptr && std::strcmp(mode, "no_device") == 0 ? CUDA_ERROR_NO_DEVICE
                                                                : CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  *count = envInt("FAKE_CUDA_DEVICES", 0);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_ERROR_NO_DEVICE:
      *name = "CUDA_ERROR_NO_DEVICE";
      break;
    case CUDA_ERROR_INVALID_VALUE:
      *name = "CUDA_ERROR_INVALID_VALUE";
      break;
    case 2:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      break;
    default:
      *name = "CUDA_ERROR_UNKNOWN";
      break;
  }
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

#ifndef FAKE_CUDA_NO_VMM
namespace {

using Handle = unsigned long long;
constexpr std::size_t kGranularity = std::size_t{2} << 20;

struct Books {
  std::mutex mutex;
  std::uintptr_t next_range = 0x7E0000000000;
  std::map<std::uintptr_t, std::size_t> ranges;  // base -> size
  std::set<Handle> handles;
  Handle next_handle = 1;
  std::map<std::uintptr_t, Handle> mapped;  // page address -> handle
  std::string fail_call;
  int fail_after = 0;
  CUresult fail_result = CUDA_SUCCESS;
};
Books& books() {
  static Books b;
  return b;
}

// Lock held: the injected failure of `call`, if due.
CUresult injected(Books& b, const char* call) {
  if (b.fail_call != call) return CUDA_SUCCESS;
  if (b.fail_after > 0) {
    --b.fail_after;
    return CUDA_SUCCESS;
  }
  return b.fail_result;  // until fake_cuda_fail("", 0, 0)
}

bool insideRange(Books& b, std::uintptr_t address, std::size_t size) {
  auto range = b.ranges.upper_bound(address);
  if (range == b.ranges.begin()) return false;
  --range;
  return address + size <= range->first + range->second;
}

}  // namespace

FAKE_EXPORT int fake_cuda_live_handles() {
  std::lock_guard<std::mutex> lock(books().mutex);
  return static_cast<int>(books().handles.size());
}
FAKE_EXPORT int fake_cuda_mapped_pages() {
  std::lock_guard<std::mutex> lock(books().mutex);
  return static_cast<int>(books().mapped.size());
}
FAKE_EXPORT int fake_cuda_reserved_ranges() {
  std::lock_guard<std::mutex> lock(books().mutex);
  return static_cast<int>(books().ranges.size());
}
FAKE_EXPORT void fake_cuda_fail(const char* call, int after, CUresult result) {
  std::lock_guard<std::mutex> lock(books().mutex);
  books().fail_call = call;
  books().fail_after = after;
  books().fail_result = result;
}

FAKE_EXPORT CUresult cuMemGetAllocationGranularity(std::size_t* granularity, const void*,
                                                   int) {
  *granularity = kGranularity;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* base, std::size_t size, std::size_t,
                                         CUdeviceptr, unsigned long long) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (size == 0 || size % kGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = injected(b, "cuMemAddressReserve"); r != CUDA_SUCCESS) return r;
  *base = b.next_range;
  b.ranges.emplace(b.next_range, size);
  b.next_range += size + kGranularity;  // a gap: ranges never touch
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAddressFree(CUdeviceptr base, std::size_t size) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  auto range = b.ranges.find(base);
  if (range == b.ranges.end() || range->second != size) return CUDA_ERROR_INVALID_VALUE;
  // Like the driver: a range with pages still mapped cannot be freed.
  auto page = b.mapped.lower_bound(base);
  if (page != b.mapped.end() && page->first < base + size)
    return CUDA_ERROR_INVALID_VALUE;
  b.ranges.erase(range);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemCreate(Handle* handle, std::size_t size, const void*,
                                 unsigned long long) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (size == 0 || size % kGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = injected(b, "cuMemCreate"); r != CUDA_SUCCESS) return r;
  *handle = b.next_handle++;
  b.handles.insert(*handle);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemMap(CUdeviceptr address, std::size_t size, std::size_t,
                              Handle handle, unsigned long long) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  // The fake maps one page per handle, which is what the backend does.
  if (size != kGranularity || b.handles.count(handle) == 0 ||
      !insideRange(b, address, size) || b.mapped.count(address) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult r = injected(b, "cuMemMap"); r != CUDA_SUCCESS) return r;
  b.mapped.emplace(address, handle);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemSetAccess(CUdeviceptr address, std::size_t size, const void*,
                                    std::size_t count) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (count != 1 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  for (std::uintptr_t page = address; page < address + size; page += kGranularity) {
    if (b.mapped.count(page) == 0) return CUDA_ERROR_INVALID_VALUE;
  }
  return injected(b, "cuMemSetAccess");
}

FAKE_EXPORT CUresult cuMemUnmap(CUdeviceptr address, std::size_t size) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (size != kGranularity || b.mapped.erase(address) != 1)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemRelease(Handle handle) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  return b.handles.erase(handle) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
#endif  // FAKE_CUDA_NO_VMM
