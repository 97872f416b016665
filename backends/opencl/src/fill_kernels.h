// The fill kernels of one device, as one thread holds them.
//
// FillKernels is the set of cl_kernel objects of src/fill*.cl for one device;
// a thread reserves its own from FillKernelPool (a DeviceThreadHandlePool,
// accel/handle_pool.h), because clSetKernelArg on one cl_kernel from two
// threads at once is a race (OpenCL 2.0 §A.2: kernel objects are not
// thread-safe for clSetKernelArg). The program behind them is built once per
// device (programs.h); a thread's kernels come back to the pool when it
// exits.
//
// Thread-safety: reserveFillKernels is thread-safe; the FillKernels it
// returns belong to the calling thread until it exits.
#pragma once

#include <string>

#include "accel/device.h"
#include "accel/device_type.h"
#include "accel/random_fill.h"
#include "cl_api.h"

namespace accel::opencl::detail {

enum class FillKernel : int {
  Bits32,
  Bits64,
  UniformFloat,
  UniformDouble,
  NormalFloat,
  NormalDouble,
  BernoulliByte,
  BernoulliFloat,
  kCount
};

// Each fill has two kernels (fill.cl): one taking its Philox position by
// value, and the one a graph capture records, which reads it from a slot of
// device memory at each replay (captured_philox.h).
struct FillKernels {
  cl_kernel kernels[static_cast<int>(FillKernel::kCount)] = {};
  cl_kernel captured[static_cast<int>(FillKernel::kCount)] = {};
  bool fp64 = false;  // the double kernels exist
  [[nodiscard]] cl_kernel get(FillKernel which) const noexcept {
    return kernels[static_cast<int>(which)];
  }
  [[nodiscard]] cl_kernel getCaptured(FillKernel which) const noexcept {
    return captured[static_cast<int>(which)];
  }
};

// The source the device compiles: the constants (from accel/philox.h and
// accel/random_fill_elements.h) followed by src/fill.cl and
// src/fill_lanes.cl. Never throws but
// bad_alloc.
std::string fillProgramSource();
// The build options for device `index` (fp64 or not, correctly rounded
// division and sqrt).
std::string fillProgramOptions(bool fp64);

// The calling thread's kernels for `device`. Throws what the build throws.
FillKernels& reserveFillKernels(DeviceIndex device);

}  // namespace accel::opencl::detail
