// libaccel_broken_streams_plugin.so: a backend that declares the device and
// streams groups but does not implement getDefaultStreamImpl and
// getNewStreamImpl (minimal_backend.h), to show that `accel check` blames a
// missing implementation, not the hook under test that uses it.
//
// Still on the C++ entry: that blame rests on HookNotImplemented, which
// only a C++ hooks object throws; over the C boundary a function the
// adapter's backend did not write answers plain NotSupported
// (ACCEL_ERROR_NOT_SUPPORTED), which the core does not yet tell apart.
#include "accel/plugin.h"
#include "minimal_backend.h"

ACCEL_DEFINE_PLUGIN("brokenstreams", "0.1.0", [](accel::Registrar& registrar) {
  using namespace accel::conformance::testing;
  registrar.registerHooks(
      makeMinimalBackend(registrar.registerDeviceType("brokenstreams"), 2,
                         Defect::StreamsWithoutDefaultOrNewStream));
});
