// The CUDA fill kernel's launcher (fill_kernels.cu), called by fill.cpp.
//
// Thread-safety: thread-safe, as kernel launches are.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "accel/random_fill_elements.h"

namespace accel::cuda::detail {

// Enqueues `job` (out in device memory of the current device) on `stream`.
// Without `replay_position`, the job's seed and offset are the position; with
// it (device memory: seed, base offset, read when the kernel runs; see
// captured_philox.h), the kernel draws from its seed at its base offset plus
// the job's offset. Returns the launch status (cudaSuccess for count 0).
cudaError_t launchFill(const accel::detail::FillJob& job,
                       const std::uint64_t* replay_position,
                       cudaStream_t stream) noexcept;

// Enqueues a one-thread kernel writing {seed, offset} to `position` (device
// memory) on `stream`: a graph replay's Philox position, ahead of the graph.
cudaError_t launchWritePhilox(std::uint64_t* position, std::uint64_t seed,
                              std::uint64_t offset, cudaStream_t stream) noexcept;

}  // namespace accel::cuda::detail
