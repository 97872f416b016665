// registerBackend and the CUDA-specific public API (accel/cuda/cuda.h), over
// the plugin's extension interface.
#include "accel/cuda/cuda.h"
#include "accel/error.h"
#include "accel/linked_plugin.h"
#include "plugin_calls.h"

// The plugin's entry under its own name (src/plugin_entry.cpp).
extern "C" accel_status accel_cuda_negotiate(const accel_core_offer* offer,
                                             accel_plugin_answer* answer);

namespace accel::cuda {

Availability availability() {
  Availability found;
  api::check(extension::availability(found), "availability");
  return found;
}

AcceleratorHooks& registerBackend() {
  static LinkedPlugin plugin{"cuda", &accel_cuda_negotiate,
                             "accel::cuda::registerBackend"};
  return plugin.hooks();
}

CUstream_st* nativeStream(Stream stream) {
  CUstream_st* native = nullptr;
  api::check(extension::nativeStream(api::pluginStream(stream, "nativeStream"), native),
             "nativeStream");
  return native;
}

Stream wrapExternalStream(CUstream_st* stream, DeviceIndex index) {
  accel_stream wrapped{};
  api::check(extension::wrapExternalStream(stream, index, wrapped), "wrapExternalStream");
  return Stream(Device(DeviceType::CUDA, wrapped.device), wrapped.id);
}

namespace api {

accel_stream pluginStream(Stream stream, std::string_view what) {
  return pluginStreamOf(stream, DeviceType::CUDA, what);
}

}  // namespace api
}  // namespace accel::cuda
