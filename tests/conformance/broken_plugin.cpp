// Deliberately broken backends as plugins, for showing that `accel check`
// fails and names the broken hook. Built once per defect; the build sets
// BROKEN_TYPE (the device type name) and BROKEN_DEFECT (a Defect value).
#include "accel/plugin.h"
#include "minimal_backend.h"

ACCEL_DEFINE_PLUGIN(BROKEN_TYPE, "0.1.0", [](accel::Registrar& registrar) {
  using namespace accel::conformance::testing;
  registrar.registerHooks(makeMinimalBackend(registrar.registerDeviceType(BROKEN_TYPE), 2,
                                             Defect::BROKEN_DEFECT));
});
