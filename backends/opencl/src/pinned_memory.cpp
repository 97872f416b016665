#include "pinned_memory.h"

#include "devices.h"
#include "loader.h"
#include "opencl_error.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

bool outOfMemory(cl_int status) noexcept {
  return status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
         status == CL_OUT_OF_HOST_MEMORY;
}

}  // namespace

void* PinnedMemory::allocate(std::int8_t, std::size_t bytes) {
  const std::uint64_t limit = deviceRecord(0).info.max_allocation_bytes;
  if (limit != 0 && bytes > limit) return nullptr;
  const Loader& l = loader();
  const cl_context context = deviceContext(0);
  cl_int status = CL_SUCCESS;
  cl_mem buffer = l.clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                   bytes, nullptr, &status);
  if (outOfMemory(status)) return nullptr;
  checkCl(status, "clCreateBuffer (CL_MEM_ALLOC_HOST_PTR, a pinned cache block)", 0);
  const cl_command_queue queue = nativeQueue(makeStream(0, kDefaultStreamId));
  void* ptr = l.clEnqueueMapBuffer(queue, buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                   bytes, 0, nullptr, nullptr, &status);
  if (status != CL_SUCCESS || ptr == nullptr) {
    (void)l.clReleaseMemObject(buffer);
    if (outOfMemory(status)) return nullptr;
    checkCl(status, "clEnqueueMapBuffer (a pinned cache block)", 0);
  }
  try {
    std::lock_guard lock(mutex_);
    buffers_.emplace(ptr, buffer);
    segments_.insert({ptr, bytes, 0});
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      buffers_.erase(ptr);
    }
    release(ptr, buffer);
    throw;
  }
  return ptr;
}

void PinnedMemory::free(std::int8_t, void* data, std::size_t) noexcept {
  cl_mem buffer = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto found = buffers_.find(data);
    if (found == buffers_.end()) return;
    buffer = found->second;
    buffers_.erase(found);
  }
  segments_.erase(data);
  release(data, buffer);
}

void PinnedMemory::release(void* ptr, cl_mem buffer) noexcept {
  const Loader& l = loader();
  try {
    const cl_command_queue queue = nativeQueue(makeStream(0, kDefaultStreamId));
    if (l.clEnqueueUnmapMemObject(queue, buffer, ptr, 0, nullptr, nullptr) ==
        CL_SUCCESS) {
      (void)l.clFinish(queue);
    }
  } catch (...) {
    // Releasing the buffer frees it even while mapped.
  }
  (void)l.clReleaseMemObject(buffer);
}

PinnedMemory& pinnedMemory() {
  static PinnedMemory* const memory = new PinnedMemory();  // never destroyed
  return *memory;
}

}  // namespace accel::opencl::detail
