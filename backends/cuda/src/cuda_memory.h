// The caching allocators of the cuda backend: the core caching allocator and
// the core pinned caching allocator, over the backend's memory
// (device_memory.h: cudaMalloc / cudaFree, cudaHostAlloc / cudaFreeHost, and
// CUDA events so that a block freed while a stream still uses it is reused
// only after that work).
//
// Expandable segments map pages through the driver's virtual memory API
// (page_mapping.h) where the driver has it; elsewhere
// expandable_segments:true is refused naming the missing entry points.
//
// Settings: ACCEL_ALLOC_CONF (allocator_settings.h), read once.
//
// Thread-safety: thread-safe. Lifetime: created on first use (only with
// devices), never destroyed.
#pragma once

#include "accel/allocator.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "device_memory.h"

namespace accel::cuda::detail {

// The device caching allocator (requires an available driver).
memory::CachingAllocator& deviceCachingAllocator();
// An accel::Allocator of device `index` that allocates for the calling
// thread's current stream of that device.
Allocator& deviceAllocator(DeviceIndex index);
memory::PinnedCachingAllocator& pinnedAllocator();

}  // namespace accel::cuda::detail
