// The OpenCL backend's registration, device information, native handles and
// programs, as programs see them (accel/opencl/opencl.h), over the plugin's
// extension interface.
#include <string>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/linked_plugin.h"
#include "accel/opencl/opencl.h"
#include "plugin_calls.h"

// The plugin's entry under the backend's own name (plugin_entry.cpp), so
// that a program linking several plugins reaches OpenCL's.
extern "C" accel_status accel_opencl_negotiate(const accel_core_offer* offer,
                                               accel_plugin_answer* answer);

namespace accel::opencl {

DeviceType deviceType() {
  static const DeviceType type = registerDeviceType(kDeviceTypeName);
  return type;
}

AcceleratorHooks& registerBackend() {
  static LinkedPlugin plugin{kDeviceTypeName, &accel_opencl_negotiate,
                             "accel::opencl::registerBackend"};
  return plugin.hooks();
}

Availability availability() {
  api::ensureRegistered();
  Availability out;
  api::check(extension::availability(out.device_count, out.reason, out.skipped),
             "availability");
  return out;
}

DeviceInfo deviceInfo(DeviceIndex index) {
  api::ensureRegistered();
  DeviceInfo info;
  api::check(extension::deviceInfo(index, info), "deviceInfo");
  return info;
}

_cl_platform_id* nativePlatform(DeviceIndex index) {
  api::ensureRegistered();
  _cl_platform_id* out = nullptr;
  api::check(extension::nativePlatform(index, out), "nativePlatform");
  return out;
}

_cl_device_id* nativeDevice(DeviceIndex index) {
  api::ensureRegistered();
  _cl_device_id* out = nullptr;
  api::check(extension::nativeDevice(index, out), "nativeDevice");
  return out;
}

_cl_context* nativeContext(DeviceIndex index) {
  api::ensureRegistered();
  _cl_context* out = nullptr;
  api::check(extension::nativeContext(index, out), "nativeContext");
  return out;
}

_cl_command_queue* nativeQueue(Stream stream) {
  api::ensureRegistered();
  _cl_command_queue* out = nullptr;
  api::check(extension::nativeQueue(api::pluginStream(stream, "nativeQueue"), out),
             "nativeQueue");
  return out;
}

SvmAllocation svmAllocation(const void* ptr) {
  api::ensureRegistered();
  SvmAllocation out;
  api::check(extension::svmAllocation(ptr, out.base, out.bytes, out.offset, out.device),
             "svmAllocation");
  return out;
}

Stream wrapExternalQueue(_cl_command_queue* queue, DeviceIndex index) {
  api::ensureRegistered();
  accel_stream out{};
  api::check(extension::wrapExternalQueue(queue, index, out), "wrapExternalQueue");
  return Stream(Device(deviceType(), out.device), out.id);
}

_cl_program* buildProgram(DeviceIndex index, std::string_view source,
                          std::string_view options) {
  api::ensureRegistered();
  _cl_program* out = nullptr;
  api::check(extension::buildProgram(index, source, options, out), "buildProgram");
  return out;
}

void copyBlocking(void* dst, const void* src, std::size_t bytes) {
  api::ensureRegistered();
  api::check(extension::copyBlocking(dst, src, bytes), "copyBlocking");
}

namespace api {

void ensureRegistered() { (void)registerBackend(); }

accel_stream pluginStream(Stream stream, std::string_view what) {
  return pluginStreamOf(stream, deviceType(), what);
}

}  // namespace api
}  // namespace accel::opencl
