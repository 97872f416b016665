// registerBackend and the CUDA-specific public API (accel/cuda/cuda.h).
#include <cuda_runtime_api.h>

#include "accel/cuda/cuda.h"
#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "cuda_hooks.h"
#include "driver.h"
#include "streams.h"

namespace accel::cuda {

Availability availability() {
  const detail::Driver& d = detail::driver();
  return {d.device_count, d.reason, d.driver_version, CUDART_VERSION};
}

AcceleratorHooks& registerBackend() {
  static AcceleratorHooks& hooks = []() -> AcceleratorHooks& {
    return registerHooks(std::make_unique<detail::CudaHooks>(),
                         "libaccel_cuda.so (accel::cuda::registerBackend)");
  }();
  return hooks;
}

CUstream_st* nativeStream(Stream stream) {
  ACCEL_CHECK(stream.device.type() == DeviceType::CUDA, InvalidArgument,
              "nativeStream: ", stream.device.str(), " is not a cuda device");
  detail::requireAvailable();
  const int index = stream.device.index();
  ACCEL_CHECK(index >= 0 && index < detail::driver().device_count, InvalidArgument,
              "nativeStream: device index ", index, " out of range [0, ",
              detail::driver().device_count, ") for 'cuda'");
  return detail::nativeStream(stream);
}

Stream wrapExternalStream(CUstream_st* stream, DeviceIndex index) {
  detail::requireAvailable();
  ACCEL_CHECK(index >= 0 && index < detail::driver().device_count, InvalidArgument,
              "wrapExternalStream: device index ", static_cast<int>(index),
              " out of range [0, ", detail::driver().device_count, ") for 'cuda'");
  return detail::wrapExternalStream(stream, index);
}

}  // namespace accel::cuda
