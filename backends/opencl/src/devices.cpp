#include "devices.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "accel/adapter/fork_safe_lazy.h"
#include "device_selection.h"
#include "loader.h"
#include "opencl_error.h"

namespace accel::opencl::detail {
namespace {

std::string platformString(const Loader& l, cl_platform_id platform,
                           cl_platform_info what) {
  std::size_t size = 0;
  if (l.clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string text(size, '\0');
  if (l.clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string deviceString(const Loader& l, cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (l.clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string text(size, '\0');
  if (l.clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

template <typename T>
T deviceValue(const Loader& l, cl_device_id device, cl_device_info what) {
  T value{};
  if (l.clGetDeviceInfo(device, what, sizeof value, &value, nullptr) != CL_SUCCESS)
    return T{};
  return value;
}

bool hasExtension(const std::string& extensions, std::string_view name) {
  std::size_t at = 0;
  while ((at = extensions.find(name, at)) != std::string::npos) {
    const std::size_t end = at + name.size();
    const bool starts = at == 0 || extensions[at - 1] == ' ';
    const bool ends = end == extensions.size() || extensions[end] == ' ';
    if (starts && ends) return true;
    at = end;
  }
  return false;
}

std::string typeName(cl_device_type type) {
  if ((type & CL_DEVICE_TYPE_GPU) != 0) return "gpu";
  if ((type & CL_DEVICE_TYPE_ACCELERATOR) != 0) return "accelerator";
  if ((type & CL_DEVICE_TYPE_CPU) != 0) return "cpu";
  return "other";
}

DeviceInfo describe(const Loader& l, cl_platform_id platform, cl_device_id device,
                    int platform_index, int device_index) {
  DeviceInfo info;
  info.platform_index = platform_index;
  info.device_index = device_index;
  info.platform_name = platformString(l, platform, CL_PLATFORM_NAME);
  info.name = deviceString(l, device, CL_DEVICE_NAME);
  info.vendor = deviceString(l, device, CL_DEVICE_VENDOR);
  info.version = deviceString(l, device, CL_DEVICE_VERSION);
  info.driver_version = deviceString(l, device, CL_DRIVER_VERSION);
  info.type = typeName(deviceValue<cl_device_type>(l, device, CL_DEVICE_TYPE));
  // "OpenCL <major>.<minor> <vendor-specific>", by the specification.
  if (std::sscanf(info.version.c_str(), "OpenCL %d.%d", &info.version_major,
                  &info.version_minor) != 2) {
    info.version_major = info.version_minor = 0;
  }
  info.global_memory_bytes = deviceValue<cl_ulong>(l, device, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.max_allocation_bytes =
      deviceValue<cl_ulong>(l, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.local_memory_bytes = deviceValue<cl_ulong>(l, device, CL_DEVICE_LOCAL_MEM_SIZE);
  info.global_cache_bytes =
      deviceValue<cl_ulong>(l, device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  info.compute_units =
      static_cast<int>(deviceValue<cl_uint>(l, device, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.max_clock_mhz =
      static_cast<int>(deviceValue<cl_uint>(l, device, CL_DEVICE_MAX_CLOCK_FREQUENCY));
  info.max_work_group_size =
      deviceValue<std::size_t>(l, device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  if (info.version_major >= 2) {
    const auto svm =
        deviceValue<cl_device_svm_capabilities>(l, device, CL_DEVICE_SVM_CAPABILITIES);
    info.coarse_grain_svm = (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
    info.fine_grain_svm = (svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
  }
  info.extensions = deviceString(l, device, CL_DEVICE_EXTENSIONS);
  info.fp64 = hasExtension(info.extensions, "cl_khr_fp64");
  info.priority_hints = hasExtension(info.extensions, "cl_khr_priority_hints");
  info.command_buffer = hasExtension(info.extensions, "cl_khr_command_buffer");
  return info;
}

void discover(Devices& d) {
  const Loader& l = loader();
  if (!l.loaded) {
    d.reason = l.reason;
    return;
  }
  DeviceSelection selection;
  const char* configured = std::getenv("ACCEL_OPENCL_DEVICES");
  const std::string setting = configured != nullptr ? configured : "";
  try {
    selection = DeviceSelection::parse(setting);
  } catch (const adapter::Failure& e) {
    d.selection_error = e.what();
    d.reason = "ACCEL_OPENCL_DEVICES is malformed: " + d.selection_error;
    return;
  }
  cl_uint platform_count = 0;
  const cl_int listed = l.clGetPlatformIDs(0, nullptr, &platform_count);
  if (listed != CL_SUCCESS || platform_count == 0) {
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    d.reason = "the OpenCL loader (" + l.library + ") found no platform (" +
               (listed != CL_SUCCESS ? "clGetPlatformIDs: " + errorName(listed)
                                     : std::string("0 platforms")) +
               "); install an OpenCL driver (an ICD: Debian's pocl-opencl-icd runs on "
               "the CPU)" +
               (vendors != nullptr ? std::string("; OCL_ICD_VENDORS=") + vendors +
                                         " is where the loader looked"
                                   : std::string(", or check /etc/OpenCL/vendors"));
    return;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  if (l.clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) {
    d.reason = "clGetPlatformIDs failed listing the platforms";
    return;
  }
  struct Seen {
    cl_platform_id platform;
    cl_device_id device;
    DeviceInfo info;
  };
  std::vector<Seen> seen;
  for (cl_uint p = 0; p < platform_count; ++p) {
    cl_uint device_count = 0;
    if (l.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count) !=
            CL_SUCCESS ||
        device_count == 0) {
      continue;
    }
    std::vector<cl_device_id> ids(device_count);
    if (l.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, ids.data(),
                         nullptr) != CL_SUCCESS) {
      continue;
    }
    for (cl_uint i = 0; i < device_count; ++i) {
      seen.push_back(
          {platforms[p], ids[i],
           describe(l, platforms[p], ids[i], static_cast<int>(p), static_cast<int>(i))});
    }
  }
  if (seen.empty()) {
    d.reason = "the OpenCL platforms have no devices";
    return;
  }
  bool any_gpu_or_accelerator = false;
  for (const Seen& s : seen) {
    if (s.info.coarse_grain_svm &&
        (s.info.type == "gpu" || s.info.type == "accelerator")) {
      any_gpu_or_accelerator = true;
    }
  }
  std::string label;
  for (Seen& s : seen) {
    label = std::to_string(s.info.platform_index) + ":" +
            std::to_string(s.info.device_index) + " " + s.info.name + " (" + s.info.type +
            ", " + s.info.version + ")";
    const bool selected =
        selection.use_default
            ? (s.info.type == "gpu" || s.info.type == "accelerator" ||
               (s.info.type == "cpu" && !any_gpu_or_accelerator))
            : selection.selects(s.info.type, s.info.platform_index, s.info.device_index);
    if (!selected) {
      d.skipped += label + ": excluded by " +
                   (selection.use_default ? std::string("the default selection (a GPU "
                                                        "or accelerator is present)")
                                          : "ACCEL_OPENCL_DEVICES=" + setting) +
                   "\n";
      continue;
    }
    if (!s.info.coarse_grain_svm) {
      d.skipped +=
          label + ": no OpenCL 2.0 coarse-grain SVM (the backend's memory is SVM)\n";
      continue;
    }
    if (d.used.size() == static_cast<std::size_t>(kMaxDevices)) {
      d.skipped += label + ": more than the " + std::to_string(kMaxDevices) +
                   " devices a type may have\n";
      continue;
    }
    auto record = std::make_unique<DeviceRecord>();
    record->platform = s.platform;
    record->device = s.device;
    record->info = std::move(s.info);
    d.used.push_back(std::move(record));
  }
  if (d.used.empty()) {
    d.reason = "no usable OpenCL device: " + d.skipped;
    while (!d.reason.empty() && d.reason.back() == '\n') d.reason.pop_back();
    for (char& c : d.reason) {
      if (c == '\n') c = ';';
    }
  }
}

}  // namespace

namespace {

// Stands in when there is no memory for a record.
const Devices kOutOfMemory{};

const Devices* discoverDevices() noexcept {
  auto* d = new (std::nothrow) Devices();  // never destroyed
  if (d == nullptr) return &kOutOfMemory;
  try {
    discover(*d);
  } catch (...) {
    d->used.clear();
    d->reason = "OpenCL device discovery failed (out of memory)";
  }
  return d;
}

// What a fork child gets when another thread of its parent was discovering
// at the fork: the driver may be half-initialised in the child.
const Devices* devicesAbandonedByFork() noexcept {
  auto* d = new (std::nothrow) Devices();  // never destroyed
  if (d == nullptr) return &kOutOfMemory;
  try {
    d->reason =
        "OpenCL devices were being discovered on another thread when this process "
        "forked; a fork child cannot finish that. Use OpenCL in the parent, or start "
        "workers with fork+exec (spawn)";
  } catch (...) {
  }
  return d;
}

// Not a function-local static: a fork child must never inherit its guard in
// progress (adapter/fork_safe_lazy.h).
constinit adapter::ForkSafeLazy<Devices> g_devices;

}  // namespace

const Devices& devices() noexcept {
  return g_devices.get<&discoverDevices, &devicesAbandonedByFork>();
}

void requireAvailable() {
  const Devices& d = devices();
  ACCEL_ADAPTER_CHECK(d.available(), NotAvailable,
                      "the opencl backend is not available: ", d.reason);
}

DeviceRecord& deviceRecord(DeviceIndex index) {
  requireAvailable();
  const Devices& d = devices();
  ACCEL_ADAPTER_CHECK(index >= 0 && index < d.count(), InvalidArgument, "device index ",
                      static_cast<int>(index), " out of range [0, ", d.count(),
                      ") for 'opencl'");
  return *d.used[index];
}

cl_context deviceContext(DeviceIndex index) {
  DeviceRecord& record = deviceRecord(index);
  cl_context context = record.context.load(std::memory_order_acquire);
  if (context != nullptr) [[likely]] {
    return context;
  }
  std::call_once(record.context_once, [&] {
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(record.platform), 0};
    cl_int status = CL_SUCCESS;
    cl_context created = loader().clCreateContext(properties, 1, &record.device, nullptr,
                                                  nullptr, &status);
    checkCl(status, "clCreateContext", index);
    record.context.store(created, std::memory_order_release);
  });
  return record.context.load(std::memory_order_acquire);
}

bool hasContext(DeviceIndex index) noexcept {
  const Devices& d = devices();
  if (index < 0 || index >= d.count()) return false;
  return d.used[index]->context.load(std::memory_order_acquire) != nullptr;
}

}  // namespace accel::opencl::detail
