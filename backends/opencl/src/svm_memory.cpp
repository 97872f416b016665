#include "svm_memory.h"

#include "devices.h"
#include "loader.h"
#include "opencl_error.h"

namespace accel::opencl::detail {

void* SvmMemory::allocate(std::int8_t device, std::size_t bytes) {
  const cl_context context = deviceContext(device);
  // clSVMAlloc answers every failure with null; out of memory is by far the
  // likeliest (the core checked the arguments), so the cache frees what it
  // holds and retries, then reports OutOfMemory. Above
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE clSVMAlloc fails by definition.
  const std::uint64_t limit = deviceRecord(device).info.max_allocation_bytes;
  if (limit != 0 && bytes > limit) return nullptr;
  void* ptr = loader().clSVMAlloc(context, CL_MEM_READ_WRITE, bytes, 0);
  if (ptr == nullptr) return nullptr;
  try {
    segments_.insert({ptr, bytes, device});
  } catch (...) {
    loader().clSVMFree(context, ptr);
    throw;
  }
  held_[static_cast<std::size_t>(device)].fetch_add(bytes, std::memory_order_relaxed);
  return ptr;
}

void SvmMemory::free(std::int8_t device, void* data, std::size_t bytes) noexcept {
  segments_.erase(data);
  held_[static_cast<std::size_t>(device)].fetch_sub(bytes, std::memory_order_relaxed);
  // The core frees a segment only once every stream's work on it has
  // completed (the events), so no queued command still uses it.
  loader().clSVMFree(devices().used[device]->context.load(std::memory_order_acquire),
                     data);
}

adapter::MemoryInfo SvmMemory::info(std::int8_t device) const noexcept {
  const Devices& d = devices();
  if (device < 0 || device >= d.count()) return {};
  const std::uint64_t total = d.used[device]->info.global_memory_bytes;
  const std::uint64_t held =
      held_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  return {total, held < total ? total - held : 0};
}

void SvmMemory::checkAllocation(std::int8_t device, std::size_t bytes) {
  const std::uint64_t limit = deviceRecord(device).info.max_allocation_bytes;
  ACCEL_ADAPTER_CHECK(limit == 0 || bytes <= limit, OutOfMemory, bytes,
                      " bytes is above the largest allocation of ", deviceLabel(device),
                      ", CL_DEVICE_MAX_MEM_ALLOC_SIZE = ", limit,
                      " bytes (clSVMAlloc cannot make it); split the allocation");
}

SvmMemory& svmMemory() {
  static SvmMemory* const memory = new SvmMemory();  // never destroyed
  return *memory;
}

}  // namespace accel::opencl::detail
