// libaccel_nodevice_plugin.so: the in-memory test backend (tests/support)
// with no devices, as a backend whose driver finds none, for `accel check`'s
// "NOT CHECKED on a device" (exit status 3).
//
// Still on the C++ entry: over the C boundary the core refuses to
// initialise a backend that counts no devices (its caches need at least
// one: CoreCaches::build), where the hooks contract has init() succeed
// without devices (conformance case high.RegisteredBackendInitialises).
// It moves to the testdev plugin's C build once the core initialises a C
// backend without devices.
#include <memory>

#include "accel/plugin.h"
#include "support/test_backend.h"

ACCEL_DEFINE_PLUGIN("nodevice", "0.1.0", [](accel::Registrar& registrar) {
  accel::DeviceType type = registrar.registerDeviceType("nodevice");
  registrar.registerHooks(std::make_unique<accel::testing::TestHooks>(type, 0));
});
