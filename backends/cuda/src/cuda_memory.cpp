#include "cuda_memory.h"

#include "accel/adapter/failure.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/kit/per_device.h"
#include "accel/memory/allocator_settings.h"
#include "accel/memory/segment_source.h"
#include "capture_registry.h"
#include "cxx_boundary.h"
#include "driver.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

// The core's segment source over the backend's memory (device_memory.h),
// for the core's allocators this backend creates itself, the backend's
// failures thrown as the library's errors (cxx_boundary.h).
class SegmentsOf final : public memory::SegmentSource {
 public:
  explicit SegmentsOf(adapter::Memory& memory) noexcept
      : memory_(memory), events_(memory.streamEvents()), pages_(memory.pages()) {}

  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    return asLibraryErrors([&] { return memory_.allocate(index, bytes); });
  }
  void freeSegment(DeviceIndex index, void* ptr, std::size_t bytes) noexcept override {
    memory_.free(index, ptr, bytes);
  }
  DeviceMemoryInfo memoryInfo(DeviceIndex index) const noexcept override {
    const adapter::MemoryInfo info = memory_.info(index);
    return {info.total_bytes, info.free_bytes};
  }

  std::size_t pageSize() const noexcept override {
    return pages_ != nullptr ? pages_->pageSize() : 0;
  }
  void* reserveAddressRange(DeviceIndex index, std::size_t bytes) override {
    return asLibraryErrors([&] { return pages_->reserve(index, bytes); });
  }
  void releaseAddressRange(DeviceIndex index, void* base,
                           std::size_t bytes) noexcept override {
    pages_->release(index, base, bytes);
  }
  bool mapPages(DeviceIndex index, void* address, std::size_t bytes) override {
    return asLibraryErrors([&] { return pages_->map(index, address, bytes); });
  }
  void unmapPages(DeviceIndex index, void* address, std::size_t bytes) noexcept override {
    pages_->unmap(index, address, bytes);
  }

  bool hasEvents() const noexcept override { return true; }
  EventId recordEvent(Stream stream) override {
    return asLibraryErrors([&] { return events_->record(toAdapter(stream)); });
  }
  bool eventCompleted(EventId event) noexcept override {
    return events_->completed(event);
  }
  void streamWaitEvent(Stream stream, EventId event) override {
    asLibraryErrors([&] { events_->wait(toAdapter(stream), event); });
  }
  void releaseEvent(EventId event) noexcept override { events_->release(event); }
  void synchronizeEvent(EventId event) override {
    asLibraryErrors([&] { events_->synchronize(event); });
  }

 private:
  adapter::Memory& memory_;
  adapter::StreamEvents* const events_;  // both memories have them
  adapter::PageMapping* const pages_;    // null without the virtual memory API
};

// The device allocators' Detour, taken only while a capture is underway
// (divertWhileCapturing): a stream forked into a capture allocates from the
// capture's private pool.
class CaptureRouting final : public kit::CachingDeviceAllocator::Detour {
 public:
  DataPtr allocate(kit::CachingDeviceAllocator& allocator, std::size_t bytes) override {
    const DeviceIndex index = allocator.device().index();
    asLibraryErrors([&] { routeToCapturePool(index, toLibrary(currentStream(index))); });
    return allocator.allocateFromCache(bytes);
  }
};

}  // namespace

memory::CachingAllocator& deviceCachingAllocator() {
  // Never destroyed: blocks may be freed during static destruction.
  static memory::CachingAllocator* const allocator = [] {
    const Driver& d = driver();
    ACCEL_ADAPTER_CHECK(d.available(), adapter::NotAvailable,
                        "the cuda backend is not available: ", d.reason);
    static SegmentsOf* const source = new SegmentsOf(deviceMemory());
    const memory::AllocatorSettings settings = memory::allocatorSettingsFromEnvironment();
    checkExpandableSegments(settings, deviceMemory().mapping());
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
  static SegmentsOf* const source = new SegmentsOf(pinnedMemory());
  static memory::PinnedCachingAllocator* const allocator =
      new memory::PinnedCachingAllocator(*source);  // never destroyed
  return *allocator;
}

}  // namespace accel::cuda::detail
