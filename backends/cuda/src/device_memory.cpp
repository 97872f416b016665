#include "device_memory.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "capture_deferrals.h"
#include "capture_registry.h"
#include "cuda_error.h"
#include "current_device.h"
#include "driver.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

// cudaMalloc, made legal during a capture: a capture in Global or
// ThreadLocal mode prohibits it on the capturing thread (and Global ones on
// every thread) and invalidates the capture; the caller's thread goes to
// Relaxed mode for the call, as PyTorch's cudaMallocMaybeCapturing does. The
// memory is the private pool's, kept for the graph's replays. Every segment
// allocation does so, not only while the backend's own captures are
// underway: a capture begun with cudaStreamBeginCapture on a wrapped stream
// is not known to the backend, and a segment is rare enough that the
// thread-local mode exchange costs nothing measurable beside cudaMalloc.
cudaError_t mallocMaybeCapturing(void** ptr, std::size_t bytes) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  checkCuda(cudaThreadExchangeStreamCaptureMode(&mode),
            "cudaThreadExchangeStreamCaptureMode");
  const cudaError_t status = cudaMalloc(ptr, bytes);
  (void)succeeded(cudaThreadExchangeStreamCaptureMode(&mode));  // restores
  return status;
}

// Out of memory is nullptr (the allocator frees cache and retries); any
// other failure throws.
void* allocatedOrNull(cudaError_t status, void* ptr, const char* call) {
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  checkCuda(status, call);
  return ptr;
}

// Runs `fn` (noexcept) with the device's context current when that works,
// and without otherwise (the driver frees by address).
template <typename Fn>
void withContext(DeviceIndex index, Fn fn) noexcept {
  try {
    DeviceContext context(index);
    fn();
    return;
  } catch (...) {
  }
  fn();
}

}  // namespace

void* DevicePages::reserve(std::int8_t device, std::size_t bytes) {
  DeviceContext context(device);
  return mapping_.reserve(device, bytes);
}

void DevicePages::release(std::int8_t device, void* base, std::size_t bytes) noexcept {
  // After the range's deferred unmaps, when it has any.
  if (deferRelease(device, base, bytes)) return;
  withContext(device, [&] { mapping_.release(base, bytes); });
}

bool DevicePages::map(std::int8_t device, void* address, std::size_t bytes) {
  DeviceContext context(device);
  // Pages whose unmap waits for the captures' end are still mapped: they
  // are taken back as they are, and only the rest is mapped.
  const auto unmapped = takeBackDeferredUnmaps(address, bytes);
  for (std::size_t i = 0; i < unmapped.size(); ++i) {
    bool mapped = false;
    try {
      mapped = mapping_.map(device, unmapped[i].first, unmapped[i].second);
    } catch (...) {
      undoMap(device, address, bytes, unmapped, i);
      throw;
    }
    if (!mapped) {
      undoMap(device, address, bytes, unmapped, i);
      return false;
    }
  }
  return true;
}

void DevicePages::unmap(std::int8_t device, void* address, std::size_t bytes) noexcept {
  // cuMemUnmap, unlike cudaFree, does not wait for work that still uses
  // the pages (a block freed on its own stream is reused in stream order,
  // so its last kernels may still be queued): the device's work is waited
  // for first. During a capture synchronising is prohibited, so the pages
  // stay mapped until the captures end.
  unmapPages(device, address, bytes);
}

// A failed map: the parts mapped before part `failed` are unmapped again
// (nothing used them), and the pages taken back from the deferred unmaps
// wait for it again, so that nothing stays mapped.
void DevicePages::undoMap(std::int8_t device, void* address, std::size_t bytes,
                          const std::vector<std::pair<void*, std::size_t>>& unmapped,
                          std::size_t failed) noexcept {
  for (std::size_t i = 0; i < failed; ++i)
    mapping_.unmap(unmapped[i].first, unmapped[i].second);
  auto at = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = at + bytes;
  for (const auto& [part, length] : unmapped) {
    const auto begin = reinterpret_cast<std::uintptr_t>(part);
    if (begin > at) unmap(device, reinterpret_cast<void*>(at), begin - at);
    at = begin + length;
  }
  if (at < end) unmap(device, reinterpret_cast<void*>(at), end - at);
}

void* DeviceMemory::allocate(std::int8_t device, std::size_t bytes) {
  DeviceContext context(device);
  void* ptr = nullptr;
  // The status first: function arguments are evaluated in no set order,
  // and `ptr` must be read after cudaMalloc wrote it.
  const cudaError_t status = mallocMaybeCapturing(&ptr, bytes);
  return allocatedOrNull(status, ptr, "cudaMalloc (a cache segment)");
}

void DeviceMemory::free(std::int8_t device, void* data, std::size_t) noexcept {
  // During a capture cudaFree is prohibited (and would invalidate other
  // threads' Global captures): freed when the captures end.
  freeSegment(device, data);
}

std::optional<std::int8_t> DeviceMemory::deviceOf(const void* ptr) const {
  const int device = deviceOfPerDriver(ptr);
  if (device < 0) return std::nullopt;
  return static_cast<std::int8_t>(device);
}

std::optional<std::int8_t> PinnedMemory::deviceOf(const void* ptr) const {
  if (!isPinnedPerDriver(ptr)) return std::nullopt;
  return std::int8_t{0};
}

void DeviceMemory::checkAllocation(std::int8_t device, std::size_t) {
  routeToCapturePool(device, currentStream(device));
}

adapter::MemoryInfo DeviceMemory::info(std::int8_t device) const noexcept {
  try {
    DeviceContext context(device);
    std::size_t free = 0, total = 0;
    if (!succeeded(cudaMemGetInfo(&free, &total))) return {};
    return {total, free};
  } catch (...) {
    return {};
  }
}

// Pinned memory is allocated and freed with the thread's current device
// current (a thread without a current context would otherwise get device 0's
// primary context created).
void* PinnedMemory::allocate(std::int8_t, std::size_t bytes) {
  DeviceContext context(currentDevice());
  void* ptr = nullptr;
  const cudaError_t status = cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault);
  void* segment = allocatedOrNull(status, ptr, "cudaHostAlloc (a pinned cache block)");
  if (segment == nullptr) return nullptr;
  try {
    segments_.insert({segment, bytes, 0});
  } catch (...) {
    (void)succeeded(cudaFreeHost(segment));
    throw;
  }
  return segment;
}

void PinnedMemory::free(std::int8_t, void* data, std::size_t) noexcept {
  segments_.erase(data);
  try {
    DeviceContext context(currentDevice());
    (void)succeeded(cudaFreeHost(data));
  } catch (...) {
    (void)succeeded(cudaFreeHost(data));
  }
}

namespace {

// The memory type of `ptr` per the driver (0 when CUDA does not know it).
unsigned int memoryType(const Driver& d, const void* ptr) noexcept {
  unsigned int type = 0;
  if (!d.available() ||
      d.pointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                            reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    return 0;
  }
  return type;
}

}  // namespace

bool isPinnedPerDriver(const void* ptr) noexcept {
  return memoryType(driver(), ptr) == CU_MEMORYTYPE_HOST;
}

int deviceOfPerDriver(const void* ptr) noexcept {
  const Driver& d = driver();
  const unsigned int type = memoryType(d, ptr);
  if (type == 0 || type == CU_MEMORYTYPE_HOST) return -1;
  int ordinal = -1;
  if (d.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                            reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS ||
      ordinal < 0 || ordinal >= d.device_count) {
    return -1;
  }
  return ordinal;
}

PageMapping& pageMapping() noexcept {
  static PageMapping* const mapping = new PageMapping(driver());  // never destroyed
  return *mapping;
}

namespace {

CudaStreamEvents& streamEvents() noexcept {
  static CudaStreamEvents* const events = new CudaStreamEvents();  // never destroyed
  return *events;
}

}  // namespace

DeviceMemory& deviceMemory() noexcept {
  static DeviceMemory* const memory = new DeviceMemory(pageMapping(), streamEvents());
  return *memory;
}

PinnedMemory& pinnedMemory() noexcept {
  static PinnedMemory* const memory = new PinnedMemory(streamEvents());
  return *memory;
}

}  // namespace accel::cuda::detail
