// The calling thread's current device, and its current stream on each
// device, kept by the backend rather than by the core: an OpenCL stream may
// be a queue the program wrapped (wrapExternalQueue, through the extension
// interface), an id the core never handed out, and it must be usable as the
// current stream (the core keeps only ids its own hooks handed out).
//
// Thread-safety: per thread by construction (thread_local).
#pragma once

#include "types.h"

namespace accel::opencl::detail {

// 0 until set; the index is stored as given (the core checks it first).
[[nodiscard]] DeviceIndex currentDevice() noexcept;
void setCurrentDevice(DeviceIndex device) noexcept;
// The default stream's id until set.
[[nodiscard]] StreamId currentStream(DeviceIndex device) noexcept;
void setCurrentStream(Stream stream) noexcept;

}  // namespace accel::opencl::detail
