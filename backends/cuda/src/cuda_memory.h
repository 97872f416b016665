// Memory of the cuda backend: the core caching allocator over cudaMalloc /
// cudaFree, and the core pinned caching allocator over cudaHostAlloc /
// cudaFreeHost, with CUDA events so that a block freed while a stream still
// uses it is reused only after that work (accel/memory/segment_source.h).
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
#include "page_mapping.h"

namespace accel::cuda::detail {

// The device caching allocator (requires an available driver).
memory::CachingAllocator& deviceCachingAllocator();
// An accel::Allocator of device `index` that allocates for the calling
// thread's current stream of that device.
Allocator& deviceAllocator(DeviceIndex index);
memory::PinnedCachingAllocator& pinnedAllocator();
// The page mapping behind expandable segments (queried once; creates no
// context). Never throws.
PageMapping& pageMapping() noexcept;

}  // namespace accel::cuda::detail
