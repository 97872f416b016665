// libaccel_testdev_plugin.so: the in-memory test backend (tests/support) as a
// loadable plugin, device type "testdev", for `accel check --plugin`.
// Built a second time as "nodevice" with no devices, as a backend whose
// driver finds no device (TESTDEV_TYPE, TESTDEV_DEVICES).
#include <memory>

#include "accel/plugin.h"
#include "support/test_backend.h"

#ifndef TESTDEV_TYPE
#define TESTDEV_TYPE "testdev"
#define TESTDEV_DEVICES 2
#endif

ACCEL_DEFINE_PLUGIN(TESTDEV_TYPE, "0.1.0", [](accel::Registrar& registrar) {
  accel::DeviceType type = registrar.registerDeviceType(TESTDEV_TYPE);
  registrar.registerHooks(
      std::make_unique<accel::testing::TestHooks>(type, TESTDEV_DEVICES));
});
