// The CUDA fill kernels: their launcher (fill_launch.cpp, called by fill.cpp
// and captured_fills.cpp), which chooses the kernel and its grid, and the
// kernels' own launches (fill_kernels.cu, device code and the <<<>>> lines
// only; the runtime double's tests replace them with the kernels' steps run
// on the host, tests/cuda/double/fill_kernels_double.cpp).
//
// Thread-safety: thread-safe, as kernel launches are.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "accel/random_fill_elements.h"

namespace accel::cuda::detail {

// Enqueues `job` (out in device memory of the current device) on `stream`.
// Without `replay_position`, the job's seed and offset are the position; with
// it (device memory: seed, base offset, read when the kernel runs; see
// captured_fills.h), the kernel draws from its seed at its base offset plus
// the job's offset. Returns the launch status (cudaSuccess for count 0).
cudaError_t launchFill(const accel::detail::FillJob& job,
                       const std::uint64_t* replay_position,
                       cudaStream_t stream) noexcept;

// A graph replay's Philox positions: slot[i] (device memory, two words)
// gets {seed[i], offset[i]}, for i < count. Passed to the kernel by value
// (1.5 KiB of parameters, within every CUDA version's 4 KiB).
struct PhiloxWrites {
  static constexpr unsigned kMax = 64;
  unsigned count = 0;
  std::uint64_t* slot[kMax] = {};
  std::uint64_t seed[kMax] = {};
  std::uint64_t offset[kMax] = {};
};

// Enqueues one kernel writing `writes` on `stream`, ahead of the graph: one
// launch per kMax captured fills instead of one per fill. Returns the launch
// status (cudaSuccess for count 0).
cudaError_t launchWritePhilox(const PhiloxWrites& writes, cudaStream_t stream) noexcept;

// The kernels' launches, as launchFill chose them (fill_mapping.h): `blocks`
// blocks of kFillThreads threads over `tiles` tiles, or over `groups`
// block-aligned groups (16-byte stores when `vectors`). Return
// cudaGetLastError() after the launch.
cudaError_t launchFillTilesKernel(const accel::detail::FillJob& job, std::size_t tiles,
                                  unsigned blocks, const std::uint64_t* replay_position,
                                  cudaStream_t stream) noexcept;
cudaError_t launchFillGroupsKernel(const accel::detail::FillJob& job, std::size_t groups,
                                   unsigned blocks, bool vectors,
                                   cudaStream_t stream) noexcept;
cudaError_t launchWritePhiloxKernel(const PhiloxWrites& writes,
                                    cudaStream_t stream) noexcept;

}  // namespace accel::cuda::detail
