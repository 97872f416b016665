#include "cuda_memory.h"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>

#include "accel/error.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/kit/per_device.h"
#include "accel/memory/allocator_settings.h"
#include "accel/memory/segment_source.h"
#include "capture_deferrals.h"
#include "capture_registry.h"
#include "cuda_error.h"
#include "current_device.h"
#include "driver.h"
#include "events.h"
#include "page_mapping.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

// Events for the allocators: the backend's own (events.h), without timing,
// aware of captures (capture_deferrals.h): a record on a capturing stream
// waits for the captures to end, and no event is queried while one is
// underway.
class EventSource : public memory::SegmentSource {
 public:
  bool hasEvents() const noexcept override { return true; }
  EventId recordEvent(Stream stream) override {
    const EventId event = createEvent(stream.device.index(), EventFlags{});
    try {
      if (!deferRecord(event, stream)) detail::recordEvent(event, stream);
    } catch (...) {
      destroyEvent(event);
      throw;
    }
    return event;
  }
  bool eventCompleted(EventId event) noexcept override {
    // CUDA forbids querying an event recorded inside a capture, in every
    // capture mode; like PyTorch, nothing is queried while one is underway.
    if (capturesUnderway() || recordDeferred(event)) return false;
    try {
      return queryEvent(event);
    } catch (...) {
      return true;  // a broken event waits for nothing; the error shows elsewhere
    }
  }
  void streamWaitEvent(Stream stream, EventId event) override {
    blockStream(event, stream);
  }
  void releaseEvent(EventId event) noexcept override {
    forgetDeferred(event);
    destroyEvent(event);
  }
  void synchronizeEvent(EventId event) override { detail::synchronizeEvent(event); }
};

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

class DeviceSegments final : public EventSource {
 public:
  explicit DeviceSegments(PageMapping& mapping) : mapping_(mapping) {}
  const PageMapping& mapping() const noexcept { return mapping_; }

  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    DeviceContext context(index);
    void* ptr = nullptr;
    // The status first: function arguments are evaluated in no set order,
    // and `ptr` must be read after cudaMalloc wrote it.
    const cudaError_t status = mallocMaybeCapturing(&ptr, bytes);
    return allocatedOrNull(status, ptr, "cudaMalloc (a cache segment)");
  }
  void freeSegment(DeviceIndex index, void* ptr, std::size_t) noexcept override {
    // During a capture cudaFree is prohibited (and would invalidate other
    // threads' Global captures): freed when the captures end.
    if (deferFree(index, ptr)) return;
    // Any context frees any device's memory (UVA), but a thread without one
    // would get device 0's created: the segment's device is current.
    withContext(index, [&] { (void)succeeded(cudaFree(ptr)); });
  }
  DeviceMemoryInfo memoryInfo(DeviceIndex index) const noexcept override {
    try {
      DeviceContext context(index);
      std::size_t free = 0, total = 0;
      if (!succeeded(cudaMemGetInfo(&free, &total))) return {};
      return {total, free};
    } catch (...) {
      return {};
    }
  }

  // Expandable segments (page_mapping.h), with the device's context current
  // as for cudaMalloc.
  std::size_t pageSize() const noexcept override { return mapping_.pageSize(); }
  void* reserveAddressRange(DeviceIndex index, std::size_t bytes) override {
    DeviceContext context(index);
    return mapping_.reserve(index, bytes);
  }
  void releaseAddressRange(DeviceIndex index, void* base,
                           std::size_t bytes) noexcept override {
    // After the range's deferred unmaps, when it has any.
    if (deferRelease(index, base, bytes)) return;
    withContext(index, [&] { mapping_.release(base, bytes); });
  }
  bool mapPages(DeviceIndex index, void* address, std::size_t bytes) override {
    DeviceContext context(index);
    // Pages whose unmap waits for the captures' end are still mapped: they
    // are taken back as they are, and only the rest is mapped.
    const auto unmapped = takeBackDeferredUnmaps(address, bytes);
    for (std::size_t i = 0; i < unmapped.size(); ++i) {
      bool mapped = false;
      try {
        mapped = mapping_.map(index, unmapped[i].first, unmapped[i].second);
      } catch (...) {
        undoMap(index, address, bytes, unmapped, i);
        throw;
      }
      if (!mapped) {
        undoMap(index, address, bytes, unmapped, i);
        return false;
      }
    }
    return true;
  }
  void unmapPages(DeviceIndex index, void* address, std::size_t bytes) noexcept override {
    // cuMemUnmap, unlike cudaFree, does not wait for work that still uses
    // the pages (a block freed on its own stream is reused in stream order,
    // so its last kernels may still be queued): the device's work is waited
    // for first. During a capture synchronising is prohibited, so the pages
    // stay mapped until the captures end (docs/cuda.md, "Captures and the
    // allocator").
    if (deferUnmap(index, address, bytes)) return;
    withContext(index, [&] {
      (void)succeeded(cudaDeviceSynchronize());
      mapping_.unmap(address, bytes);
    });
  }

 private:
  // A failed mapPages: the parts mapped before part `failed` are unmapped
  // again (nothing used them), and the pages taken back from the deferred
  // unmaps wait for it again, so that nothing stays mapped.
  void undoMap(DeviceIndex index, void* address, std::size_t bytes,
               const std::vector<std::pair<void*, std::size_t>>& unmapped,
               std::size_t failed) noexcept {
    for (std::size_t i = 0; i < failed; ++i)
      mapping_.unmap(unmapped[i].first, unmapped[i].second);
    auto at = reinterpret_cast<std::uintptr_t>(address);
    const std::uintptr_t end = at + bytes;
    for (const auto& [part, length] : unmapped) {
      const auto begin = reinterpret_cast<std::uintptr_t>(part);
      if (begin > at) unmapPages(index, reinterpret_cast<void*>(at), begin - at);
      at = begin + length;
    }
    if (at < end) unmapPages(index, reinterpret_cast<void*>(at), end - at);
  }

  // Runs `fn` (noexcept) with the device's context current when that works,
  // and without otherwise (the driver frees by address).
  template <typename Fn>
  static void withContext(DeviceIndex index, Fn fn) noexcept {
    try {
      DeviceContext context(index);
      fn();
      return;
    } catch (...) {
    }
    fn();
  }

  PageMapping& mapping_;
};

// Pinned memory is allocated and freed with the thread's current device
// current (a thread without a current context would otherwise get device 0's
// primary context created).
class PinnedSegments final : public EventSource {
 public:
  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    DeviceContext context(currentDevice());
    void* ptr = nullptr;
    const cudaError_t status = cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault);
    return allocatedOrNull(status, ptr, "cudaHostAlloc (a pinned cache block)");
  }
  void freeSegment(DeviceIndex, void* ptr, std::size_t) noexcept override {
    try {
      DeviceContext context(currentDevice());
      (void)succeeded(cudaFreeHost(ptr));
    } catch (...) {
      (void)succeeded(cudaFreeHost(ptr));
    }
  }
};

// The device allocators' Detour, taken only while a capture is underway
// (divertWhileCapturing): a stream forked into a capture allocates from the
// capture's private pool.
class CaptureRouting final : public kit::CachingDeviceAllocator::Detour {
 public:
  DataPtr allocate(kit::CachingDeviceAllocator& allocator, std::size_t bytes) override {
    const DeviceIndex index = allocator.device().index();
    routeToCapturePool(index, currentStream(index));
    return allocator.allocateFromCache(bytes);
  }
};

}  // namespace

PageMapping& pageMapping() noexcept {
  static PageMapping* const mapping = new PageMapping(driver());  // never destroyed
  return *mapping;
}

memory::CachingAllocator& deviceCachingAllocator() {
  // Never destroyed: blocks may be freed during static destruction.
  static memory::CachingAllocator* const allocator = [] {
    const Driver& d = driver();
    ACCEL_CHECK(d.available(), NotAvailable,
                "the cuda backend is not available: ", d.reason);
    static DeviceSegments* const source = new DeviceSegments(pageMapping());
    const memory::AllocatorSettings settings = memory::allocatorSettingsFromEnvironment();
    checkExpandableSegments(settings, source->mapping());
    return new memory::CachingAllocator(DeviceType::CUDA, d.device_count, *source,
                                        settings);
  }();
  return *allocator;
}

// The core's device allocator (kit::CachingDeviceAllocator): a framework's
// call lands in libaccel beside the cache, on the thread's current stream.
// Made diverted, so that a capture that begins before it is registered with
// the capture registry is routed all the same.
Allocator& deviceAllocator(DeviceIndex index) {
  static kit::PerDevice<kit::CachingDeviceAllocator> allocators;
  if (kit::CachingDeviceAllocator* made = allocators.find(index)) [[likely]]
    return *made;
  static CaptureRouting routing;  // trivially destructible
  kit::CachingDeviceAllocator& made = allocators.get(
      index, deviceCachingAllocator(), index, threadCurrent(), &routing, true);
  divertWhileCapturing(made);
  return made;
}

memory::PinnedCachingAllocator& pinnedAllocator() {
  static PinnedSegments* const source = new PinnedSegments();
  static memory::PinnedCachingAllocator* const allocator =
      new memory::PinnedCachingAllocator(*source);  // never destroyed
  return *allocator;
}

}  // namespace accel::cuda::detail
