// PinnedMemory: page-locked host memory of the opencl backend, what the
// core's pinned cache draws its segments from: buffers created with
// CL_MEM_ALLOC_HOST_PTR on device 0's context and mapped for the host once
// (the OpenCL idiom for page-locked host memory), unmapped and released
// when the segment is freed. The core keeps the cache, isPinnedPtr, and a
// block given to an asynchronous copy from its next owner until the stream
// is past the copy (the events, queue_events.h).
//
// A segment above device 0's CL_DEVICE_MAX_MEM_ALLOC_SIZE is refused as
// out of memory without asking OpenCL (clCreateBuffer would refuse it as a
// device error): the core's pinned cache then reports OutOfMemory.
//
// Thread-safety: thread-safe. Lifetime: never destroyed (pinnedMemory()).
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "accel/adapter/backend.h"
#include "accel/adapter/segment_map.h"
#include "cl_api.h"
#include "queue_events.h"
#include "types.h"

namespace accel::opencl::detail {

class PinnedMemory final : public adapter::Memory {
 public:
  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] adapter::StreamEvents* streamEvents() noexcept override {
    return &events_;
  }

  // Whether `ptr` lies in a pinned segment (interior pointers count; cached
  // blocks too). Never throws.
  [[nodiscard]] bool contains(const void* ptr) const noexcept {
    return segments_.find(ptr).has_value();
  }

 private:
  static void release(void* ptr, cl_mem buffer) noexcept;

  QueueEvents events_;
  SegmentMap segments_;
  std::mutex mutex_;
  std::unordered_map<void*, cl_mem> buffers_;
};

PinnedMemory& pinnedMemory();

}  // namespace accel::opencl::detail
