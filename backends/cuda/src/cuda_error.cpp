#include "cuda_error.h"

#include <string>

#include "accel/error.h"

namespace accel::cuda::detail {

void checkCuda(cudaError_t status, std::string_view what, std::source_location where) {
  if (status == cudaSuccess) [[likely]] {
    return;
  }
  (void)cudaGetLastError();  // clear the non-sticky error state for the next call
  std::string message = std::string(what) + " failed: " + cudaGetErrorName(status) +
                        " (" + cudaGetErrorString(status) + ")";
  switch (status) {
    case cudaErrorMemoryAllocation:
      throw OutOfMemory(message + "; free device memory or use smaller sizes", where);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevice:
      throw InvalidArgument(message, where);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      throw NotAvailable(message, where);
    default:
      throw DeviceError(message, where);
  }
}

bool succeeded(cudaError_t status) noexcept {
  if (status == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

}  // namespace accel::cuda::detail
