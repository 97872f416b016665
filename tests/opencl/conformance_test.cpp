// The backend contract suite (conformance/) run against the opencl backend
// on the machine's OpenCL driver (pocl on the CPU here and in CI): every hook
// of every group it declares, NotSupported for the others. Cases that need a
// device skip with the suite's reason where none is usable.
#include "accel/conformance.h"
#include "accel/opencl/opencl.h"

namespace {

const bool kOpenClRegistered = [] {
  (void)accel::opencl::registerBackend();
  return true;
}();

}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(OpenCl, "opencl");
