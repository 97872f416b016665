// The plugin's side of the cuda backend's extension interface (extension.h).
#include "extension.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "accel/adapter/failure.h"
#include "cuda_backend.h"
#include "current_device.h"
#include "driver.h"
#include "streams.h"

namespace accel::cuda::extension {
namespace {

template <typename Body>
Status capture(Body&& body) noexcept {
  return adapter::extensionGuard("the cuda backend", std::forward<Body>(body));
}

// `device`, checked against the devices the probe found.
void requireDevice(const char* api, int device) {
  detail::requireAvailable();
  const int count = detail::driver().device_count;
  ACCEL_ADAPTER_CHECK(device >= 0 && device < count, adapter::InvalidArgument, api,
                      ": device index ", device, " out of range [0, ", count,
                      ") for 'cuda'");
}

}  // namespace

Status availability(Availability& out) noexcept {
  return capture([&] {
    const detail::Driver& d = detail::driver();
    out = {d.device_count, d.reason, d.driver_version, CUDART_VERSION};
  });
}

Status nativeStream(accel_stream stream, CUstream_st*& out) noexcept {
  return capture([&] {
    requireDevice("nativeStream", stream.device);
    out = detail::nativeStream(stream);
  });
}

Status wrapExternalStream(CUstream_st* stream, std::int8_t device,
                          accel_stream& out) noexcept {
  return capture([&] {
    requireDevice("wrapExternalStream", device);
    out = detail::wrapExternalStream(stream, device);
  });
}

Status onDevice(std::int8_t device, void (*work)(void*) noexcept, void* arg) noexcept {
  return capture([&] {
    requireDevice("onDevice", device);
    detail::DeviceContext context(device);
    work(arg);
  });
}

}  // namespace accel::cuda::extension
