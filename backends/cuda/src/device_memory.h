// The cuda backend's raw memory, in whole segments, as the caching
// allocators draw from it (adapter::Memory):
//  - DeviceMemory: cudaMalloc / cudaFree with the device's context current,
//    legal during a capture (the allocating thread goes to Relaxed capture
//    mode), frees deferred while a capture is underway (capture_deferrals.h);
//    its pages (DevicePages) back expandable segments where the driver has
//    the virtual memory API (page_mapping.h);
//  - PinnedMemory: cudaHostAlloc / cudaFreeHost with the thread's current
//    device current; it keeps its segments, which are exactly the core's
//    pinned cache's, so that the copies can tell the cache's pinned memory
//    from pinned memory the core does not know.
// Both hand out the backend's stream events (stream_events.h).
// DeviceMemory's checkAllocation, asked while a capture is underway (the
// capture registry diverts the core's allocations then), joins a stream
// forked into a capture to the capture's private pool (capture_registry.h).
//
// Thread-safety: thread-safe. Lifetime: created on first use, never
// destroyed (blocks may be freed during static destruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "accel/adapter/backend.h"
#include "accel/adapter/segment_map.h"
#include "page_mapping.h"
#include "stream_events.h"

namespace accel::cuda::detail {

// Hidden like their adapter bases, also where the backend's sources are
// built with default visibility (the test build).
#pragma GCC visibility push(hidden)

// Expandable segments' pages with the device's context current, their
// unmaps (and the releases of their ranges) deferred while a capture is
// underway: cuMemUnmap does not wait for the device's work, and
// synchronising is prohibited during a capture (docs/cuda.md, "Captures and
// the allocator").
class DevicePages final : public adapter::PageMapping {
 public:
  explicit DevicePages(detail::PageMapping& mapping) noexcept : mapping_(mapping) {}

  [[nodiscard]] std::size_t pageSize() const noexcept override {
    return mapping_.pageSize();
  }
  [[nodiscard]] void* reserve(std::int8_t device, std::size_t bytes) override;
  void release(std::int8_t device, void* base, std::size_t bytes) noexcept override;
  [[nodiscard]] bool map(std::int8_t device, void* address, std::size_t bytes) override;
  void unmap(std::int8_t device, void* address, std::size_t bytes) noexcept override;

 private:
  void undoMap(std::int8_t device, void* address, std::size_t bytes,
               const std::vector<std::pair<void*, std::size_t>>& unmapped,
               std::size_t failed) noexcept;

  detail::PageMapping& mapping_;
};

class DeviceMemory final : public adapter::Memory {
 public:
  DeviceMemory(detail::PageMapping& mapping, CudaStreamEvents& events) noexcept
      : mapping_(mapping), pages_(mapping), events_(events) {}

  // nullptr when the device is out of memory; throws DeviceError otherwise.
  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  // cudaMemGetInfo; unknown (zeros) when it fails.
  [[nodiscard]] adapter::MemoryInfo info(std::int8_t device) const noexcept override;
  [[nodiscard]] adapter::StreamEvents* streamEvents() noexcept override {
    return &events_;
  }
  // nullptr where the driver has no virtual memory API.
  [[nodiscard]] adapter::PageMapping* pages() noexcept override {
    return mapping_.pageSize() > 0 ? &pages_ : nullptr;
  }
  [[nodiscard]] const detail::PageMapping& mapping() const noexcept { return mapping_; }
  // Routes an allocation on the thread's current stream of `device` to the
  // private pool of the capture the stream was forked into, if any.
  void checkAllocation(std::int8_t device, std::size_t bytes) override;
  // Device memory CUDA knows that the core's cache did not hand out
  // (another library's cudaMalloc): its device, per the driver.
  [[nodiscard]] std::optional<std::int8_t> deviceOf(const void* ptr) const override;

 private:
  detail::PageMapping& mapping_;
  DevicePages pages_;
  CudaStreamEvents& events_;
};

class PinnedMemory final : public adapter::Memory {
 public:
  explicit PinnedMemory(CudaStreamEvents& events) noexcept : events_(events) {}

  // nullptr when out of memory; throws DeviceError otherwise.
  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] adapter::StreamEvents* streamEvents() noexcept override {
    return &events_;
  }
  // Pinned host memory CUDA knows that the core's cache did not hand out
  // (cudaHostAlloc, cudaHostRegister): device 0, as the pinned cache's.
  [[nodiscard]] std::optional<std::int8_t> deviceOf(const void* ptr) const override;
  // Whether `ptr` lies in a segment of this memory (the core's pinned
  // cache). Never throws.
  [[nodiscard]] bool holds(const void* ptr) const noexcept {
    return segments_.find(ptr).has_value();
  }

 private:
  CudaStreamEvents& events_;
  adapter::SegmentMap segments_;
};

#pragma GCC visibility pop

// Pointer queries the driver answers (cuPointerGetAttribute), for any
// memory CUDA knows, whoever allocated or registered it: whether `ptr` is
// page-locked host memory; the device whose device (or managed) memory
// holds `ptr` (-1 for host memory and memory CUDA does not know). Create no
// context; never throw.
[[nodiscard]] bool isPinnedPerDriver(const void* ptr) noexcept;
[[nodiscard]] int deviceOfPerDriver(const void* ptr) noexcept;

// The page mapping behind expandable segments (queried once; creates no
// context). Never throws.
detail::PageMapping& pageMapping() noexcept;
// The backend's memories (the first call queries the page mapping; no
// runtime call until they allocate). Never throw.
DeviceMemory& deviceMemory() noexcept;
PinnedMemory& pinnedMemory() noexcept;

}  // namespace accel::cuda::detail
