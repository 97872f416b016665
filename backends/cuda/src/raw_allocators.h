// Uncached allocators over cudaMalloc/cudaFree (one per device) and
// cudaHostAlloc/cudaFreeHost (pinned host memory).
//
// Stand-ins until the core caching allocator is plugged into this backend
// (docs/cuda.md): every allocate is a runtime call, every free synchronises
// as cudaFree does. They give getDeviceAllocator and getPinnedMemoryAllocator
// correct, if slow, answers; the memory groups stay undeclared.
//
// Thread-safety: thread-safe. Lifetime: never destroyed.
#pragma once

#include "accel/allocator.h"

namespace accel::cuda::detail {

Allocator& deviceAllocator(DeviceIndex index);
Allocator& pinnedAllocator();

}  // namespace accel::cuda::detail
