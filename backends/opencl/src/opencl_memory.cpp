#include "opencl_memory.h"

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/kit/per_device.h"
#include "accel/memory/allocator_settings.h"
#include "accel/memory/segment_source.h"
#include "accel/opencl/opencl.h"
#include "devices.h"
#include "events.h"
#include "loader.h"
#include "opencl_error.h"
#include "opencl_hooks.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

kit::AddressMap& addressMap() {
  static kit::AddressMap* const map =
      new kit::AddressMap(deviceType());  // never destroyed
  return *map;
}

// The backend's events (events.h), without timing, for both allocators.
class EventSource : public memory::SegmentSource {
 public:
  bool hasEvents() const noexcept override { return true; }
  EventId recordEvent(Stream stream) override {
    const EventId event = createEvent(stream.device.index(), EventFlags{});
    try {
      detail::recordEvent(event, stream);
    } catch (...) {
      destroyEvent(event);
      throw;
    }
    return event;
  }
  bool eventCompleted(EventId event) noexcept override {
    try {
      return queryEvent(event);
    } catch (...) {
      return true;  // a failed command waits for nothing; the error shows elsewhere
    }
  }
  void streamWaitEvent(Stream stream, EventId event) override {
    blockStream(event, stream);
  }
  void releaseEvent(EventId event) noexcept override { destroyEvent(event); }
  void synchronizeEvent(EventId event) override { detail::synchronizeEvent(event); }
};

class DeviceSegments final : public EventSource {
 public:
  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    const cl_context context = deviceContext(index);
    // clSVMAlloc answers every failure with null; out of memory is by far
    // the likeliest (arguments are checked by the allocator and the size
    // against the device limit before), so the allocator frees its cache
    // and retries, then reports OutOfMemory.
    // Above CL_DEVICE_MAX_MEM_ALLOC_SIZE clSVMAlloc fails by definition.
    const std::uint64_t limit = deviceRecord(index).info.max_allocation_bytes;
    if (limit != 0 && bytes > limit) return nullptr;
    void* ptr = loader().clSVMAlloc(context, CL_MEM_READ_WRITE, bytes, 0);
    if (ptr == nullptr) return nullptr;
    try {
      addressMap().insert(ptr, bytes, Device(deviceType(), index),
                          kit::MemoryKind::Device);
    } catch (...) {
      loader().clSVMFree(context, ptr);
      throw;
    }
    held_[index].fetch_add(bytes, std::memory_order_relaxed);
    return ptr;
  }
  void freeSegment(DeviceIndex index, void* ptr, std::size_t bytes) noexcept override {
    (void)addressMap().erase(ptr);
    held_[index].fetch_sub(bytes, std::memory_order_relaxed);
    // The allocator frees a segment only once every stream's work on it has
    // completed (events), so no queued command still uses it.
    const Devices& d = devices();
    loader().clSVMFree(d.used[index]->context.load(std::memory_order_acquire), ptr);
  }
  DeviceMemoryInfo memoryInfo(DeviceIndex index) const noexcept override {
    const Devices& d = devices();
    if (index < 0 || index >= d.count()) return {};
    const std::size_t total = d.used[index]->info.global_memory_bytes;
    const std::size_t held = held_[index].load(std::memory_order_relaxed);
    return {total, held < total ? total - held : 0};
  }

 private:
  std::array<std::atomic<std::size_t>, kMaxDevicesPerType> held_{};
};

// Pinned host memory: a CL_MEM_ALLOC_HOST_PTR buffer of device 0's context,
// mapped for the host once and unmapped when the segment is freed.
class PinnedSegments final : public EventSource {
 public:
  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    // Above the device's largest buffer clCreateBuffer fails with
    // CL_INVALID_BUFFER_SIZE, a misuse to a device but out of memory to the
    // caller, and one that freeing the cache cannot cure: said at once.
    const std::uint64_t limit = deviceRecord(0).info.max_allocation_bytes;
    if (limit != 0 && bytes > limit) {
      throw OutOfMemory(accel::detail::concat(
          "pinned host memory: cannot pin ", bytes,
          " bytes (the request rounded up to a ",
          "power of two): it is above the largest buffer of ", deviceLabel(0),
          ", CL_DEVICE_MAX_MEM_ALLOC_SIZE = ", limit,
          " bytes (clCreateBuffer cannot make it); split the allocation"));
    }
    const Loader& l = loader();
    const cl_context context = deviceContext(0);
    cl_int status = CL_SUCCESS;
    cl_mem buffer = l.clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                     bytes, nullptr, &status);
    if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
        status == CL_OUT_OF_HOST_MEMORY) {
      return nullptr;
    }
    checkCl(status, "clCreateBuffer (CL_MEM_ALLOC_HOST_PTR, a pinned cache block)", 0);
    const cl_command_queue queue = nativeQueue(Stream(Device(deviceType(), 0), 0));
    void* ptr = l.clEnqueueMapBuffer(queue, buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                     0, bytes, 0, nullptr, nullptr, &status);
    if (status != CL_SUCCESS || ptr == nullptr) {
      (void)l.clReleaseMemObject(buffer);
      if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
          status == CL_OUT_OF_HOST_MEMORY) {
        return nullptr;
      }
      checkCl(status, "clEnqueueMapBuffer (a pinned cache block)", 0);
    }
    try {
      std::lock_guard lock(mutex_);
      buffers_.emplace(ptr, buffer);
      addressMap().insert(ptr, bytes, Device(DeviceType::CPU, 0),
                          kit::MemoryKind::Pinned);
    } catch (...) {
      release(ptr, buffer);
      throw;
    }
    return ptr;
  }
  void freeSegment(DeviceIndex, void* ptr, std::size_t) noexcept override {
    cl_mem buffer = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto found = buffers_.find(ptr);
      if (found == buffers_.end()) return;
      buffer = found->second;
      buffers_.erase(found);
    }
    (void)addressMap().erase(ptr);
    release(ptr, buffer);
  }

 private:
  static void release(void* ptr, cl_mem buffer) noexcept {
    const Loader& l = loader();
    try {
      const cl_command_queue queue = nativeQueue(Stream(Device(deviceType(), 0), 0));
      if (l.clEnqueueUnmapMemObject(queue, buffer, ptr, 0, nullptr, nullptr) ==
          CL_SUCCESS) {
        (void)l.clFinish(queue);
      }
    } catch (...) {
      // Releasing the buffer frees it even while mapped.
    }
    (void)l.clReleaseMemObject(buffer);
  }

  std::mutex mutex_;
  std::unordered_map<void*, cl_mem> buffers_;
};

// The OutOfMemory of a request the device could never satisfy, with the
// reason; any other OutOfMemory rethrown as it is. Called in a handler.
[[noreturn]] void explainOutOfMemory(const OutOfMemory& e, DeviceIndex device,
                                     std::size_t bytes) {
  // The core ran its OOM path (cache freed, retried, observers told).
  const std::uint64_t limit = deviceRecord(device).info.max_allocation_bytes;
  if (limit == 0 || bytes <= limit) throw;
  // A sentence of its own after the core's (which ends with its period).
  throw OutOfMemory(e.message() + " The cause: " + std::to_string(bytes) +
                    " bytes is above the largest allocation of " + deviceLabel(device) +
                    ", CL_DEVICE_MAX_MEM_ALLOC_SIZE = " + std::to_string(limit) +
                    " bytes (clSVMAlloc cannot make it); split the allocation.");
}

// The device allocators' Detour. They are never diverted (an OpenCL device
// has no rare case to check per allocation); what it adds is the reason of
// an out-of-memory error above the device's largest allocation.
class OutOfMemoryExplainer final : public kit::CachingDeviceAllocator::Detour {
 public:
  DataPtr allocate(kit::CachingDeviceAllocator& allocator, std::size_t bytes) override {
    return allocator.allocateFromCache(bytes);
  }
  void outOfMemory(const OutOfMemory& error, const kit::CachingDeviceAllocator& allocator,
                   std::size_t bytes) override {
    explainOutOfMemory(error, allocator.device().index(), bytes);
  }
};

}  // namespace

const kit::AddressMap& addresses() { return addressMap(); }

memory::CachingAllocator& deviceCachingAllocator() {
  // Never destroyed: blocks may be freed during static destruction.
  static memory::CachingAllocator* const allocator = [] {
    requireAvailable();
    static DeviceSegments* const source = new DeviceSegments();
    return new memory::CachingAllocator(deviceType(), devices().count(), *source,
                                        memory::allocatorSettingsFromEnvironment());
  }();
  return *allocator;
}

// The core's device allocator (kit::CachingDeviceAllocator), made on the
// first getDeviceAllocator(index), after init: a framework's call lands in
// libaccel beside the cache, on the thread's current stream of the hooks'
// ThreadCurrent.
Allocator& deviceAllocator(DeviceIndex index) {
  static kit::PerDevice<kit::CachingDeviceAllocator> allocators;
  if (kit::CachingDeviceAllocator* made = allocators.find(index)) [[likely]]
    return *made;
  static OutOfMemoryExplainer explainer;  // trivially destructible
  const auto& hooks = static_cast<const OpenClHooks&>(registerBackend());
  return allocators.get(index, deviceCachingAllocator(), index, hooks.threadCurrent(),
                        &explainer);
}

memory::PinnedCachingAllocator& pinnedAllocator() {
  static PinnedSegments* const source = new PinnedSegments();
  static memory::PinnedCachingAllocator* const allocator =
      new memory::PinnedCachingAllocator(*source);  // never destroyed
  return *allocator;
}

}  // namespace accel::opencl::detail
