// The backend contract suite (conformance/) run against openreg: every hook
// of every group openreg declares, and NotSupported for the one it does not.
#include <cstdlib>

#include "accel/conformance.h"
#include "accel/openreg/backend.h"

namespace {

const bool kOpenRegRegistered = [] {
  ::setenv("ACCEL_OPENREG_DEVICES", "2", 1);
  ::setenv("ACCEL_OPENREG_MEMORY", "64MiB", 1);
  accel::openreg::registerBackend();
  return true;
}();

}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(OpenReg, "openreg");
