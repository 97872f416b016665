// The OpenCL device fill (the fill group, OpenClBackend::fill): one
// function for every random fill of accel/device_fill.h, in the shape of the plugin ABI's
// fills (a kind, a and b as the kind says; ACCEL_FILL_* of accel/plugin_abi.h),
// bit-identical to the core's host fill for the same (seed, offset).
//
// It checks the parameters with the core's own fill (so that device and host
// accept exactly the same values), the output against the core's block map
// (one live allocation of the stream's device: a kernel writing elsewhere
// would corrupt memory the driver cannot check), borrows the device's
// kernels (building them on first use, before anything is drawn), then
// either claims the draw from the generator at once (in program order) and
// enqueues the kernel on the stream's queue, or, while a graph captures the
// stream, records the kernel's "_captured" variant reading its position from
// a slot each replay writes (recording.h): a captured fill draws nothing
// until it is replayed.
//
// Thread-safety: thread-safe; fills from one generator on several threads
// get disjoint parts of its stream. Errors: InvalidArgument for parameters
// the host fill rejects (nothing is drawn then), an unknown kind, or an
// output outside one allocation; NotSupported for a double fill on a device
// without cl_khr_fp64; DeviceError when the build, the launch or the
// recording fails; what the core's reservation throws.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/adapter/core.h"
#include "types.h"

namespace accel::opencl::detail {

// `generator` null: the stream's device's default generator. `api` names
// the caller in messages ("fillUniform").
void enqueueFill(const adapter::Core& core, std::string_view api, Stream stream,
                 std::int32_t kind, void* data, std::uint64_t count, double a, double b,
                 accel_generator* generator);

}  // namespace accel::opencl::detail
