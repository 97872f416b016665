// SvmMemory: device memory of the opencl backend, what the core's caching
// device allocator draws its segments from: clSVMAlloc / clSVMFree of the
// device's context (coarse-grain SVM; a kernel takes a pointer into it with
// clSetKernelArgSVMPointer). The core keeps the cache, its statistics and
// history, pointer lookups and the graphs' private pools; the backend's
// events (queue_events.h) tell it when a queue is past a freed block.
//
// Expandable segments are not offered: OpenCL cannot map pages into a
// reserved address range. OpenCL reports no free memory: info() says total
// (CL_DEVICE_GLOBAL_MEM_SIZE) minus what this backend holds; other
// processes' use of the device is not seen. A request above
// CL_DEVICE_MAX_MEM_ALLOC_SIZE cannot be made by clSVMAlloc: the backend
// diverts every device's allocations (OpenClBackend::init), and
// checkAllocation refuses such a request as out of memory with that reason,
// so the core frees its cache, tells its out-of-memory observers and throws
// OutOfMemory carrying it.
//
// Every segment is kept in a SegmentMap: svmAllocation and the recording of
// device copies find the clSVMAlloc allocation behind a pointer there.
//
// Thread-safety: thread-safe. Lifetime: never destroyed (svmMemory()).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <optional>

#include "accel/adapter/backend.h"
#include "accel/adapter/segment_map.h"
#include "queue_events.h"
#include "types.h"

namespace accel::opencl::detail {

class SvmMemory final : public adapter::Memory {
 public:
  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] adapter::MemoryInfo info(std::int8_t device) const noexcept override;
  [[nodiscard]] adapter::StreamEvents* streamEvents() noexcept override {
    return &events_;
  }
  // Refuses a request above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE
  // (OutOfMemory naming it).
  void checkAllocation(std::int8_t device, std::size_t bytes) override;

  // The clSVMAlloc allocation (a segment of the cache, live or cached)
  // holding `ptr`, or nullopt. Never throws.
  [[nodiscard]] std::optional<Segment> segmentOf(const void* ptr) const noexcept {
    return segments_.find(ptr);
  }

 private:
  QueueEvents events_;
  SegmentMap segments_;
  std::array<std::atomic<std::size_t>, kMaxDevices> held_{};
};

SvmMemory& svmMemory();

}  // namespace accel::opencl::detail
