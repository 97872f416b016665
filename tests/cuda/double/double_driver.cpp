// The driver entry points of the double (what the backend's driver.cpp
// resolves with dlsym from libcuda.so.1, which this library is): the probe,
// primary-context state, current contexts, pointer attributes and the
// virtual memory API (address ranges and pages are real host mappings).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_double.h"
#include "double_runtime.h"

using namespace cuda_double;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// Device d's allocation granularity: 2 MiB (current GPUs), or the d-th
// entry of CUDA_DOUBLE_GRANULARITY_MIB ("2,4": cuda:1 has 4 MiB granules),
// so tests can give devices different ones.
std::size_t granularity(int device) {
  static const std::vector<std::size_t>* const sizes = [] {
    auto* out = new std::vector<std::size_t>();
    if (const char* text = std::getenv("CUDA_DOUBLE_GRANULARITY_MIB"); text != nullptr) {
      for (const char* at = text; *at != '\0';) {
        char* end = nullptr;
        out->push_back(std::strtoull(at, &end, 10) * kMiB);
        at = *end == ',' ? end + 1 : end + std::strlen(end);
      }
    }
    return out;
  }();
  const auto index = static_cast<std::size_t>(device);
  return index < sizes->size() && (*sizes)[index] > 0 ? (*sizes)[index] : 2 * kMiB;
}

// The smallest granularity: what address ranges are reserved in.
std::size_t smallestGranularity(int device_count) {
  std::size_t smallest = granularity(0);
  for (int d = 1; d < device_count; ++d) smallest = std::min(smallest, granularity(d));
  return smallest;
}

struct Physical {
  int fd = -1;
  std::size_t bytes = 0;
  int device = 0;
};

struct Books {
  std::map<std::uintptr_t, std::size_t> ranges;    // reserved: base -> size
  std::map<unsigned long long, Physical> handles;  // cuMemCreate
  std::map<std::uintptr_t, std::pair<std::size_t, int>>
      maps;  // mapped: address -> (size, device)
  unsigned long long next_handle = 1;
};
Books& books() {  // State's lock guards it
  static Books* const b = new Books();
  return *b;
}

bool insideRange(std::uintptr_t address, std::size_t bytes) {
  auto range = books().ranges.upper_bound(address);
  if (range == books().ranges.begin()) return false;
  --range;
  return address + bytes <= range->first + range->second;
}

int deviceCount() { return State::get().device_count; }

std::string& moduleLoadingAtInit() {
  static auto* const value = new std::string("(cuInit not called)");
  return *value;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
  // CUDA: Programming Guide, "Lazy Loading": CUDA_MODULE_LOADING is read when
  // the driver initialises; kept for tests.
  static std::once_flag first;
  std::call_once(first, [] {
    const char* loading = std::getenv("CUDA_MODULE_LOADING");
    moduleLoadingAtInit() = loading != nullptr ? loading : "";
  });
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

const char* cuda_double_module_loading_at_init() { return moduleLoadingAtInit().c_str(); }

CUresult cuDriverGetVersion(int* version) {
  const char* text = std::getenv("CUDA_DOUBLE_DRIVER_VERSION");
  *version = text != nullptr ? std::atoi(text) : CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  *count = deviceCount();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount()) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_SUCCESS:
      *name = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *name = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *name = "CUDA_ERROR_INVALID_CONTEXT";
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (device < 0 || device >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  *flags = 0;
  *active = s.contexts[static_cast<std::size_t>(device)].active ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (device < 0 || device >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  // CUDA: Driver API, cuDevicePrimaryCtxRetain: creates the primary context
  // when it is not active; the runtime uses it as its own.
  CUctx_st& primary = s.contexts[static_cast<std::size_t>(device)];
  primary.active = true;
  *context = &primary;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* context) {
  *context = thread().current;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  // CUDA: Driver API, cuCtxSetCurrent: null unbinds the current context;
  // anything else must be a live context (here: an active primary one).
  if (context != nullptr &&
      (context < s.contexts.data() || context >= s.contexts.data() + s.device_count ||
       !context->active)) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  thread().current = context;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
  // CUDA: Driver API, cuCtxGetDevice: CUDA_ERROR_INVALID_CONTEXT without a
  // current context.
  if (thread().current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = thread().current->device;
  return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                               CUdeviceptr ptr) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  const Allocation* found = s.find(ptr, 1);
  if (found == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) =
          found->kind == MemoryKind::Pinned ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = found->device;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDeviceCanAccessPeer(int* can, CUdevice device, CUdevice peer) {
  // Like cudaDeviceCanAccessPeer: every pair of distinct devices can, except
  // on a machine without P2P (CUDA_DOUBLE_NO_P2P=1).
  const int count = deviceCount();
  if (can == nullptr || device < 0 || device >= count || peer < 0 || peer >= count) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *can = device != peer && !State::get().no_p2p ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t* granularity,
                                       const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags) {
  if (prop == nullptr || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      prop->location.id < 0 || prop->location.id >= deviceCount()) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *granularity = ::granularity(prop->location.id);
  return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr* base, size_t size, size_t alignment,
                             CUdeviceptr, unsigned long long) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  const std::size_t unit = smallestGranularity(s.device_count);
  if (size == 0 || size % unit != 0) return CUDA_ERROR_INVALID_VALUE;
  alignment = std::max(alignment, unit);
  void* area = mmap(nullptr, size + alignment, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto start = reinterpret_cast<std::uintptr_t>(area);
  const std::uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
  if (aligned > start) munmap(area, aligned - start);
  if (const std::uintptr_t tail = start + size + alignment - (aligned + size); tail > 0) {
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  }
  books().ranges[aligned] = size;
  *base = aligned;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr base, size_t size) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  auto range = books().ranges.find(base);
  if (range == books().ranges.end() || range->second != size)
    return CUDA_ERROR_INVALID_VALUE;
  // CUDA: Driver API, cuMemAddressFree: the range's mappings must be gone.
  auto mapped = books().maps.lower_bound(base);
  if (mapped != books().maps.end() && mapped->first < base + size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  munmap(reinterpret_cast<void*>(base), size);
  books().ranges.erase(range);
  return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  // CUDA: Driver API, cuMemCreate: the size must be a multiple of the
  // device's granularity (cuMemGetAllocationGranularity).
  if (prop == nullptr || size == 0 || prop->location.id < 0 ||
      prop->location.id >= s.device_count || size % granularity(prop->location.id) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::size_t& used = s.used[static_cast<std::size_t>(prop->location.id)];
  if (size > s.capacity - used) return CUDA_ERROR_OUT_OF_MEMORY;
  const int fd = memfd_create("cuda_double_page", 0);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (fd >= 0) close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  used += size;
  *handle = books().next_handle++;
  books().handles[*handle] = {fd, size, prop->location.id};
  return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  auto found = books().handles.find(handle);
  if (found == books().handles.end()) return CUDA_ERROR_INVALID_VALUE;
  close(found->second.fd);  // a mapping keeps the memory until unmapped
  s.used[static_cast<std::size_t>(found->second.device)] -= found->second.bytes;
  books().handles.erase(found);
  return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr address, size_t size, size_t offset,
                  CUmemGenericAllocationHandle handle, unsigned long long) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  auto found = books().handles.find(handle);
  if (found == books().handles.end() || offset != 0 || size != found->second.bytes ||
      !insideRange(address, size) || books().maps.count(address) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* at = mmap(reinterpret_cast<void*>(address), size, PROT_NONE,
                  MAP_SHARED | MAP_FIXED, found->second.fd, 0);
  if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  books().maps[address] = {size, found->second.device};
  return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr address, size_t size, const CUmemAccessDesc* desc,
                        size_t count) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (desc == nullptr || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  unsigned int access = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (desc[i].location.id < 0 || desc[i].location.id >= s.device_count) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      access |= 1u << desc[i].location.id;
  }
  // The range must be whole mappings, back to back.
  for (std::uintptr_t page = address; page < address + size;) {
    auto mapped = books().maps.find(page);
    if (mapped == books().maps.end()) return CUDA_ERROR_INVALID_VALUE;
    page += mapped->second.first;
  }
  for (std::uintptr_t page = address; page < address + size;) {
    const auto [bytes, device] = books().maps[page];
    mprotect(reinterpret_cast<void*>(page), bytes, PROT_READ | PROT_WRITE);
    s.memory[page] = {bytes, device, MemoryKind::Mapped, access};
    page += bytes;
  }
  return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr address, size_t size) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  auto found = books().maps.find(address);
  if (found == books().maps.end() || found->second.first != size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // CUDA: Driver API, cuMemUnmap: unlike cudaFree, it does not wait for work
  // that uses the range; on a GPU that work then faults. The double reports
  // the misuse as a violation.
  if (s.inUse({address, size})) {
    s.violation("cuMemUnmap of memory that queued work still uses (0x" +
                std::to_string(address) + ", " + std::to_string(size) + " bytes)");
  }
  s.memory.erase(address);
  mmap(reinterpret_cast<void*>(address), size, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  books().maps.erase(found);
  return CUDA_SUCCESS;
}

}  // extern "C"
