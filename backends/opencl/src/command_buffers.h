// cl_khr_command_buffer: whether a device can carry the graphs group, and
// the extension's entry points for it.
//
// The extension is provisional and its ABI has changed between versions
// (0.9.5 added a properties parameter to the copy commands), so a device is
// used only when it reports a version whose entry points match the headers
// this backend is built with: 0.9.0 to 0.9.4 (pocl 3.1 has 0.9.0). The entry
// points come from clGetExtensionFunctionAddressForPlatform, per platform.
// A queue property the extension requires must be one every backend queue
// has (they are in order with profiling).
//
// Thread-safety: support() is thread-safe (each device is examined once);
// the result is immutable. Lifetime: never destroyed.
#pragma once

#include <string>

#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

struct CommandBufferSupport {
  bool usable = false;
  // Why not, in words ("no cl_khr_command_buffer", "cl_khr_command_buffer
  // 0.9.6: ..."); empty when usable.
  std::string reason;
  std::string version;  // "0.9.0"
  // Several enqueues of one command buffer may be pending at once
  // (CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR).
  bool simultaneous_use = false;

  clCreateCommandBufferKHR_fn create = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clCommandCopyBufferKHR_fn copy_buffer = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
};

// Device `index`'s support (examined on first call; no context is created).
// Throws InvalidArgument / NotAvailable as deviceRecord does.
const CommandBufferSupport& commandBufferSupport(DeviceIndex index);

// True when there are devices and every one of them is usable: the backend
// then declares the graphs group. Never throws.
bool everyDeviceHasCommandBuffers() noexcept;

}  // namespace accel::opencl::detail
