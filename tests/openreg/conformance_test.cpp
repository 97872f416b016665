// The backend contract suite (conformance/) run against openreg: every hook
// of every group openreg declares, and NotSupported for the one it does not.
// The in-memory test backend is registered beside it, so that the copies
// cases can hand openreg another backend's memory.
#include <cstdlib>

#include "accel/conformance.h"
#include "accel/openreg/backend.h"
#include "support/test_backend.h"

namespace {

const bool kOpenRegRegistered = [] {
  ::setenv("ACCEL_OPENREG_DEVICES", "2", 1);
  ::setenv("ACCEL_OPENREG_MEMORY", "64MiB", 1);
  accel::openreg::registerBackend();
  (void)accel::testing::registerTestBackend("testdev", 1);
  return true;
}();

}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(OpenReg, "openreg");
