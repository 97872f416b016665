// Library workspaces per (handle, stream): the memory cuBLAS and cuBLASLt
// use for their kernels, one buffer per pair so that two streams never
// share one (work on both could overlap).
//
// Buffers are allocated on the pair's first use and kept for the process
// (a handle outlives its thread, and the pair may come back); they come from
// the core caching allocator, allocated for the pair's stream (the thread's
// current stream when the handle is bound).
//
// Thread-safety: thread-safe (one mutex; taken only when a thread binds a
// handle to a stream it did not use last).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "accel/device.h"

namespace accel::cuda::detail {

struct WorkspaceBuffer {
  void* data = nullptr;
  std::size_t bytes = 0;  // what was allocated: the size to give the library
};

// The workspace of (handle, stream) on `device`: allocated `bytes` long on
// the pair's first use, and the same buffer with its first size ever after
// (a later, larger `bytes` would let the library write past the buffer).
// Throws OutOfMemory/DeviceError from the allocation.
WorkspaceBuffer workspaceFor(const void* handle, cudaStream_t stream, DeviceIndex device,
                             std::size_t bytes);

}  // namespace accel::cuda::detail
