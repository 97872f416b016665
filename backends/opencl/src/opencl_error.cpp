#include "opencl_error.h"

#include "devices.h"
#include "loader.h"

namespace accel::opencl::detail {

std::string during(std::string_view call, HookId hook) {
  return std::string(call) + " (" + std::string(name(hook)) + ")";
}

std::string deviceLabel(DeviceIndex index) {
  std::string label = "opencl:" + std::to_string(static_cast<int>(index));
  const Devices& d = devices();
  if (index >= 0 && index < d.count()) label += " (" + d.used[index]->info.name + ")";
  return label;
}

void throwCl(cl_int status, std::string_view what, DeviceIndex device) {
  std::string message =
      std::string(what) + " failed on " + deviceLabel(device) + ": " + errorName(status);
  switch (status) {
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
      throw OutOfMemory(message + "; free memory (" +
                        std::string(name(HookId::emptyCache)) + ") or use smaller sizes");
    default:
      throw DeviceError(message);
  }
}

}  // namespace accel::opencl::detail
