// The fill kernels of one device, as one thread holds them.
//
// FillKernels is the set of cl_kernel objects of src/fill*.cl for one device;
// a fill borrows a set of its own for as long as it sets the arguments and
// enqueues (BorrowedFillKernels), because clSetKernelArg on one cl_kernel from
// two threads at once is a race (OpenCL 2.0 §A.2: kernel objects are not
// thread-safe for clSetKernelArg). Sets are made on demand (as many as fills
// run at once) and go back to the device's pool when the fill gives it back. The
// program behind them is built once per device (programs.h).
//
// Thread-safety: borrowing is thread-safe; a borrowed set is the holder's alone.
#pragma once

#include <string>

#include "cl_api.h"
#include "types.h"

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

// A set of `device`'s kernels, the holder's alone until it is given back.
// Making one throws what the build throws.
class BorrowedFillKernels {
 public:
  explicit BorrowedFillKernels(DeviceIndex device);
  ~BorrowedFillKernels();
  BorrowedFillKernels(const BorrowedFillKernels&) = delete;
  BorrowedFillKernels& operator=(const BorrowedFillKernels&) = delete;
  [[nodiscard]] const FillKernels& kernels() const noexcept { return *kernels_; }

 private:
  DeviceIndex device_;
  FillKernels* kernels_;
};

}  // namespace accel::opencl::detail
