// The backend contract suite (conformance/) run against the opencl backend
// on the machine's OpenCL driver (pocl on the CPU here and in CI): every hook
// of every group it declares, NotSupported for the others. Cases that need a
// device skip with the suite's reason where none is usable. openreg is
// registered beside it where it is built, so that the copies cases can hand
// opencl another backend's memory.
#include "accel/conformance.h"
#include "accel/opencl/opencl.h"
#ifdef ACCEL_WITH_OPENREG
#include "accel/openreg/backend.h"
#endif

namespace {

const bool kOpenClRegistered = [] {
  (void)accel::opencl::registerBackend();
#ifdef ACCEL_WITH_OPENREG
  (void)accel::openreg::registerBackend();
#endif
  return true;
}();

}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(OpenCl, "opencl");
