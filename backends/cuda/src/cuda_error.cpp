#include "cuda_error.h"

#include <string>

#include "accel/adapter/failure.h"

namespace accel::cuda::detail {

void checkCuda(cudaError_t status, std::string_view what) {
  if (status == cudaSuccess) [[likely]] {
    return;
  }
  (void)cudaGetLastError();  // clear the non-sticky error state for the next call
  std::string message = std::string(what) + " failed: " + cudaGetErrorName(status) +
                        " (" + cudaGetErrorString(status) + ")";
  switch (status) {
    case cudaErrorMemoryAllocation:
      throw adapter::OutOfMemory(message + "; free device memory or use smaller sizes");
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevice:
      throw adapter::InvalidArgument(message);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      throw adapter::NotAvailable(message);
    default:
      throw adapter::DeviceError(message);
  }
}

bool succeeded(cudaError_t status) noexcept {
  if (status == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

}  // namespace accel::cuda::detail
