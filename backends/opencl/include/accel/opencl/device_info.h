// DeviceInfo: what clGetDeviceInfo says about one OpenCL device the backend
// uses, as typed fields (accel::opencl::deviceInfo, accel/opencl/opencl.h).
// A plain struct of standard types: the plugin fills it and the program-side
// API hands it on.
//
// Thread-safety: a plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel::opencl {

// What clGetDeviceInfo says about one used device, as typed fields.
struct DeviceInfo {
  int platform_index = 0;  // platform:device, as ACCEL_OPENCL_DEVICES names it
  int device_index = 0;
  std::string platform_name;
  std::string name;
  std::string vendor;
  std::string version;         // CL_DEVICE_VERSION, "OpenCL 3.0 PoCL ..."
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string type;            // "gpu", "accelerator", "cpu" or "other"
  int version_major = 0;
  int version_minor = 0;
  std::uint64_t global_memory_bytes = 0;
  std::uint64_t max_allocation_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::uint64_t local_memory_bytes = 0;
  std::uint64_t global_cache_bytes = 0;
  int compute_units = 0;
  int max_clock_mhz = 0;
  std::size_t max_work_group_size = 0;
  bool coarse_grain_svm = false;
  bool fine_grain_svm = false;
  bool fp64 = false;
  bool priority_hints = false;  // cl_khr_priority_hints
  bool command_buffer = false;  // cl_khr_command_buffer
  std::string extensions;       // CL_DEVICE_EXTENSIONS, space-separated
};

}  // namespace accel::opencl
