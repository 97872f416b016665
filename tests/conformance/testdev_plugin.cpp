// libaccel_testdev_plugin.so: the in-memory test backend (tests/support) as a
// loadable plugin, device type "testdev", for `accel check --plugin`.
#include <memory>

#include "accel/plugin.h"
#include "support/test_backend.h"

ACCEL_DEFINE_PLUGIN("testdev", "0.1.0", [](accel::Registrar& registrar) {
  accel::DeviceType type = registrar.registerDeviceType("testdev");
  registrar.registerHooks(std::make_unique<accel::testing::TestHooks>(type, 2));
});
