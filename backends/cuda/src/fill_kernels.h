// The CUDA fill kernel's launcher (fill_kernels.cu), called by fill.cpp.
//
// Thread-safety: thread-safe, as kernel launches are.
#pragma once

#include <cuda_runtime_api.h>

#include "accel/random_fill_elements.h"

namespace accel::cuda::detail {

// Enqueues `job` (seed and offset set, out in device memory of the current
// device) on `stream`. Returns the launch status (cudaSuccess for count 0).
cudaError_t launchFill(const accel::detail::FillJob& job, cudaStream_t stream) noexcept;

}  // namespace accel::cuda::detail
