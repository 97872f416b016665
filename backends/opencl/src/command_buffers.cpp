#include "command_buffers.h"

#include <vector>

#include "accel/kit/per_device.h"
#include "devices.h"
#include "loader.h"

namespace accel::opencl::detail {
namespace {

// The versions whose entry points have the signatures of our headers.
constexpr cl_version kFirstVersion = CL_MAKE_VERSION(0, 9, 0);
constexpr cl_version kAfterLastVersion = CL_MAKE_VERSION(0, 9, 5);

std::string versionText(cl_version v) {
  return std::to_string(CL_VERSION_MAJOR(v)) + "." + std::to_string(CL_VERSION_MINOR(v)) +
         "." + std::to_string(CL_VERSION_PATCH(v));
}

// The extension's version from CL_DEVICE_EXTENSIONS_WITH_VERSION (OpenCL
// 3.0); 0 when the device does not say.
cl_version extensionVersion(const Loader& l, cl_device_id device) {
  std::size_t bytes = 0;
  if (l.clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes) !=
          CL_SUCCESS ||
      bytes == 0) {
    return 0;
  }
  std::vector<cl_name_version> entries(bytes / sizeof(cl_name_version));
  if (l.clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, entries.data(),
                        nullptr) != CL_SUCCESS) {
    return 0;
  }
  for (const cl_name_version& entry : entries) {
    if (std::string(entry.name) == "cl_khr_command_buffer") return entry.version;
  }
  return 0;
}

template <typename Fn>
Fn entryPoint(const Loader& l, cl_platform_id platform, const char* name) {
  return reinterpret_cast<Fn>(l.clGetExtensionFunctionAddressForPlatform(platform, name));
}

CommandBufferSupport examine(DeviceIndex index) {
  const DeviceRecord& record = deviceRecord(index);
  const Loader& l = loader();
  CommandBufferSupport s;
  if (!record.info.command_buffer) {
    s.reason = "the device has no cl_khr_command_buffer";
    return s;
  }
  const cl_version version = extensionVersion(l, record.device);
  s.version = version == 0 ? "unknown" : versionText(version);
  if (version < kFirstVersion || version >= kAfterLastVersion) {
    s.reason = "cl_khr_command_buffer " + s.version +
               " is not a version this backend was written for (0.9.0 to 0.9.4: the "
               "provisional extension's entry points changed in 0.9.5)";
    return s;
  }
  cl_command_queue_properties required = 0;
  (void)l.clGetDeviceInfo(record.device,
                          CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
                          sizeof required, &required, nullptr);
  if ((required & ~cl_command_queue_properties{CL_QUEUE_PROFILING_ENABLE}) != 0) {
    s.reason =
        "cl_khr_command_buffer requires queue properties the backend's in-order "
        "queues do not have";
    return s;
  }
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  (void)l.clGetDeviceInfo(record.device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                          sizeof capabilities, &capabilities, nullptr);
  s.simultaneous_use =
      (capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
  const cl_platform_id platform = record.platform;
  s.create =
      entryPoint<clCreateCommandBufferKHR_fn>(l, platform, "clCreateCommandBufferKHR");
  s.finalize = entryPoint<clFinalizeCommandBufferKHR_fn>(l, platform,
                                                         "clFinalizeCommandBufferKHR");
  s.release =
      entryPoint<clReleaseCommandBufferKHR_fn>(l, platform, "clReleaseCommandBufferKHR");
  s.ndrange =
      entryPoint<clCommandNDRangeKernelKHR_fn>(l, platform, "clCommandNDRangeKernelKHR");
  s.copy_buffer =
      entryPoint<clCommandCopyBufferKHR_fn>(l, platform, "clCommandCopyBufferKHR");
  s.enqueue =
      entryPoint<clEnqueueCommandBufferKHR_fn>(l, platform, "clEnqueueCommandBufferKHR");
  if (s.create == nullptr || s.finalize == nullptr || s.release == nullptr ||
      s.ndrange == nullptr || s.copy_buffer == nullptr || s.enqueue == nullptr) {
    s.reason =
        "the platform reports cl_khr_command_buffer but "
        "clGetExtensionFunctionAddressForPlatform does not give all its entry "
        "points";
    return s;
  }
  s.usable = true;
  return s;
}

}  // namespace

const CommandBufferSupport& commandBufferSupport(DeviceIndex index) {
  static kit::PerDevice<CommandBufferSupport> table;
  (void)deviceRecord(index);  // checks the index
  if (const CommandBufferSupport* found = table.find(index)) return *found;
  return table.get(index, examine(index));
}

bool everyDeviceHasCommandBuffers() noexcept {
  try {
    const Devices& d = devices();
    if (!d.available()) return false;
    for (int i = 0; i < d.count(); ++i) {
      if (!commandBufferSupport(static_cast<DeviceIndex>(i)).usable) return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace accel::opencl::detail
