// accel.opencl._native: the OpenCL backend's extras beyond the hooks
// (registration, why there are no devices, device info, native
// handles as integers), a module of its own that accel/opencl/__init__.py
// wraps (backend_modules.h). Buffer copies go through the backend's copies
// hooks. Built only with the OpenCL backend.
#include <pybind11/stl.h>

#include <cstdint>

#include "accel/error.h"
#include "accel/opencl/opencl.h"
#include "backend_modules.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

Stream streamFrom(const py::object& stream) {
  const auto packed =
      stream.attr("pack3")().cast<std::tuple<long long, long long, long long>>();
  return Stream::unpack3(std::get<0>(packed), std::get<1>(packed), std::get<2>(packed));
}

void bindOpenClModule(py::module_& o) {
  o.def(
      "register_backend", [] { (void)opencl::registerBackend(); },
      "Registers the opencl hooks (once per process; no device is touched).");
  o.def(
      "availability", []() -> Typed<"Dict[str, Any]"> {
        // Through the bounded probe first (docs/lifecycle.md, "Discovery"): a
        // driver that hangs while listing devices makes this answer "none"
        // within ACCEL_DISCOVERY_TIMEOUT, with the reason, instead of waiting
        // with it. Once the probe finished, the device list is cached.
        opencl::Availability a;
        {
          py::gil_scoped_release release;  // other threads run while it waits
          const AcceleratorHooks& hooks = getHooks(opencl::deviceType());
          (void)hooks.deviceCount();
          a.reason = hooks.discoveryProblem();
          if (a.reason.empty()) a = opencl::availability();
        }
        py::dict out;
        out["device_count"] = a.device_count;
        out["reason"] = a.reason;
        out["skipped"] = a.skipped;
        return out;
      },
      "Device count, why there are none, and the devices seen but not used.");
  o.def(
      "device_info", [](DeviceIndexArg index) -> Typed<"Dict[str, Any]"> {
        const opencl::DeviceInfo i = opencl::deviceInfo(index.value);
        py::dict out;
        out["platform_index"] = i.platform_index;
        out["device_index"] = i.device_index;
        out["platform_name"] = i.platform_name;
        out["name"] = i.name;
        out["vendor"] = i.vendor;
        out["version"] = i.version;
        out["driver_version"] = i.driver_version;
        out["type"] = i.type;
        out["global_memory_bytes"] = i.global_memory_bytes;
        out["max_allocation_bytes"] = i.max_allocation_bytes;
        out["local_memory_bytes"] = i.local_memory_bytes;
        out["compute_units"] = i.compute_units;
        out["max_work_group_size"] = i.max_work_group_size;
        out["coarse_grain_svm"] = i.coarse_grain_svm;
        out["fine_grain_svm"] = i.fine_grain_svm;
        out["fp64"] = i.fp64;
        out["priority_hints"] = i.priority_hints;
        out["command_buffer"] = i.command_buffer;
        out["extensions"] = i.extensions;
        return out;
      },
      py::arg("index"));
  o.def(
      "native_handles", [](DeviceIndexArg index) -> Typed<"Dict[str, int]"> {
        const DeviceIndex i = index.value;
        py::dict out;
        out["platform"] = reinterpret_cast<std::uintptr_t>(opencl::nativePlatform(i));
        out["device"] = reinterpret_cast<std::uintptr_t>(opencl::nativeDevice(i));
        out["context"] = reinterpret_cast<std::uintptr_t>(opencl::nativeContext(i));
        return out;
      },
      py::arg("index"), "cl_platform_id, cl_device_id, cl_context as integers.");
  o.def(
      "native_queue",
      [](const Typed<"accel._C.Stream">& stream) {
        return reinterpret_cast<std::uintptr_t>(opencl::nativeQueue(streamFrom(stream)));
      },
      py::arg("stream"), "The cl_command_queue behind a stream, as an integer.");
}

const BackendModuleRegistrar kOpenClModule{
    "accel.opencl._native", "the OpenCL backend's extras.", &bindOpenClModule};

}  // namespace
}  // namespace accel::python
