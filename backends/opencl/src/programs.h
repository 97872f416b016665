// Programs: OpenCL C built once per device and kept.
//
// pocl (and most OpenCL compilers) take from a hundred milliseconds to
// seconds to build a program, so each device keeps the programs it built,
// keyed by (source, options), for the process lifetime. A build that fails
// throws DeviceError with the compiler's build log, and is tried again on
// the next request (the log may say how to fix the environment).
//
// Thread-safety: thread-safe; one device's builds are serialised (a second
// thread asking for the same program waits for the first build instead of
// building again). Lifetime: programs are never released.
#pragma once

#include <string_view>

#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

cl_program programFor(DeviceIndex device, std::string_view source,
                      std::string_view options);

// Programs built so far on `device` (tests check the cache). Never throws.
int builtProgramCount(DeviceIndex device) noexcept;

}  // namespace accel::opencl::detail
