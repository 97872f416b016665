// The extension interface of libaccel_opencl.so: what the OpenCL backend's
// own API (accel/opencl/*.h, compiled into the programs that use it: the
// static library accel_opencl, api/) asks of the plugin beyond the hooks the
// core calls: availability, device information, native handles, external
// queues, programs and blocking copies.
//
// Both sides are the OpenCL backend, built together, so the interface is
// C++; nothing of the core crosses it (streams are accel_stream, generators
// the core's C handles, CL handles the OpenCL types), and nothing is thrown
// across it: each function returns an ExtensionStatus with the plugin's
// message (accel/adapter/extension_status.h), which the API throws as the
// library's error of that kind. The plugin exports these and its
// negotiation entries, nothing else.
//
// Thread-safety: every function is thread-safe. Functions taking a device
// or a stream need the plugin registered (the API registers it first:
// registerBackend()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/adapter/extension_status.h"
#include "accel/opencl/device_info.h"
#include "accel/opencl/export.h"
#include "accel/plugin_abi.h"

struct _cl_platform_id;
struct _cl_device_id;
struct _cl_context;
struct _cl_command_queue;
struct _cl_program;

namespace accel::opencl::extension {

using Status = adapter::ExtensionStatus;

// The device count, why there are no devices, the devices seen and not used.
ACCEL_OPENCL_API Status availability(int& device_count, std::string& reason,
                                     std::string& skipped) noexcept;
ACCEL_OPENCL_API Status deviceInfo(std::int8_t device, DeviceInfo& info) noexcept;
ACCEL_OPENCL_API Status nativePlatform(std::int8_t device,
                                       _cl_platform_id*& out) noexcept;
ACCEL_OPENCL_API Status nativeDevice(std::int8_t device, _cl_device_id*& out) noexcept;
// Creates the device's context on first use.
ACCEL_OPENCL_API Status nativeContext(std::int8_t device, _cl_context*& out) noexcept;
// The queue behind `stream`; from then on queries of the stream ask the
// queue (work may be enqueued on it behind the backend's back).
ACCEL_OPENCL_API Status nativeQueue(accel_stream stream,
                                    _cl_command_queue*& out) noexcept;
// The clSVMAlloc allocation holding `ptr`, which must be in a live block of
// the device cache.
ACCEL_OPENCL_API Status svmAllocation(const void* ptr, void*& base, std::size_t& bytes,
                                      std::size_t& offset, std::int8_t& device) noexcept;
ACCEL_OPENCL_API Status wrapExternalQueue(_cl_command_queue* queue, std::int8_t device,
                                          accel_stream& out) noexcept;
ACCEL_OPENCL_API Status buildProgram(std::int8_t device, std::string_view source,
                                     std::string_view options,
                                     _cl_program*& out) noexcept;
ACCEL_OPENCL_API Status copyBlocking(void* dst, const void* src,
                                     std::size_t bytes) noexcept;

}  // namespace accel::opencl::extension
