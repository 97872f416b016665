// Memory of the opencl backend.
//
// Device memory: the core caching allocator over clSVMAlloc / clSVMFree
// (coarse-grain SVM of the device's context; a pointer a kernel takes with
// clSetKernelArgSVMPointer), with the backend's events so that a block freed
// while a queue still uses it is reused only after that work, and a free
// segment moves between streams by a barrier instead of staying stranded.
// Expandable segments are not offered: OpenCL cannot map pages into a
// reserved address range (expandable_segments:true is refused by the core).
//
// Pinned host memory: the core pinned cache over buffers created with
// CL_MEM_ALLOC_HOST_PTR and mapped once (the OpenCL idiom for page-locked
// host memory), on device 0's context.
//
// Every segment (device and pinned) is recorded in a kit::AddressMap, so
// getDeviceFromPtr and isPinnedPtr are one lookup that accepts interior
// pointers and names freed memory.
//
// OpenCL reports no free memory: memoryInfo says total
// (CL_DEVICE_GLOBAL_MEM_SIZE) - what this backend holds, for the OOM message,
// memory fractions and the getMemoryInfo hook; other processes' use of the
// device is not seen.
//
// Thread-safety: thread-safe. Lifetime: created on first use (only with
// devices), never destroyed.
#pragma once

#include "accel/allocator.h"
#include "accel/kit/address_map.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"

namespace accel::opencl::detail {

memory::CachingAllocator& deviceCachingAllocator();
// Device `index`'s Allocator: allocates for the calling thread's current
// stream of that device. An allocation above the device's
// CL_DEVICE_MAX_MEM_ALLOC_SIZE throws OutOfMemory saying so, without
// touching the cache.
Allocator& deviceAllocator(DeviceIndex index);
memory::PinnedCachingAllocator& pinnedAllocator();
// The segments of both allocators.
const kit::AddressMap& addresses();

}  // namespace accel::opencl::detail
