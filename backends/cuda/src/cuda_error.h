// checkCuda: turns a CUDA runtime status into the failure a caller can act
// on (accel/adapter/failure.h; the core hands it on as the library's error of
// that kind).
//
// cudaErrorMemoryAllocation becomes OutOfMemory, cudaErrorInvalidValue and
// cudaErrorInvalidResourceHandle InvalidArgument, driver/device absence
// NotAvailable, anything else DeviceError; the message names the call, the
// CUDA error name and its description. The runtime's sticky error state is
// cleared for non-sticky errors (cudaGetLastError), so one failed call does
// not poison the next.
//
// Thread-safety: thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

namespace accel::cuda::detail {

// Throws as above unless status is cudaSuccess. `what` names the runtime call
// and its purpose ("cudaStreamCreateWithPriority (getNewStream on cuda:1)").
void checkCuda(cudaError_t status, std::string_view what);

// Like checkCuda, but never throws; returns status == cudaSuccess (for
// destructors and noexcept paths).
bool succeeded(cudaError_t status) noexcept;

}  // namespace accel::cuda::detail
