// OpenCL status codes as accelhooks errors.
//
// checkCl(status, what, device) throws when status is not CL_SUCCESS:
// OutOfMemory for CL_OUT_OF_RESOURCES / CL_MEM_OBJECT_ALLOCATION_FAILURE /
// CL_OUT_OF_HOST_MEMORY, DeviceError otherwise; the message names the call,
// the device ("opencl:0 (pthread-skylake...)") and the status by name.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

// "clFinish (deviceSynchronize)": an OpenCL call and the hook it serves, for
// messages. Never throws but bad_alloc.
std::string during(std::string_view call, HookId hook);

// "opencl:0 (pthread-skylake-avx512-AMD EPYC)". Never throws but bad_alloc.
std::string deviceLabel(DeviceIndex index);

void throwCl(cl_int status, std::string_view what, DeviceIndex device);

inline void checkCl(cl_int status, std::string_view what, DeviceIndex device) {
  if (status != CL_SUCCESS) [[unlikely]] {
    throwCl(status, what, device);
  }
}

// The same for `call` serving `hook`; the message is only formatted on
// failure (these run on every record and query).
inline void checkCl(cl_int status, std::string_view call, HookId hook,
                    DeviceIndex device) {
  if (status != CL_SUCCESS) [[unlikely]] {
    throwCl(status, during(call, hook), device);
  }
}

}  // namespace accel::opencl::detail
