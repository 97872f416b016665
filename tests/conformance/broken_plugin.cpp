// Deliberately broken backends as plugins of the C boundary, for showing
// that `accel check` fails and names the broken hook, and that `accel info`
// and `accel check` survive a driver that crashes or hangs. Each is the
// testdev backend (testdev/testdev_backend.h) with one testdev::Defect,
// written on the adapter and linking nothing of libaccel.so. Built once
// per defect; the build sets BROKEN_TYPE (the device type name),
// BROKEN_DEFECT (a testdev::Defect value) and, for a backend that declares
// fewer than every group, BROKEN_GROUPS (ACCEL_GROUP_* bits).
#include <memory>

#include "accel/plugin_adapter.h"
#include "testdev/testdev_backend.h"

#ifndef BROKEN_GROUPS
#define BROKEN_GROUPS testdev::kAllGroups
#endif

namespace {

void registerBroken(accel::adapter::Registrar& registrar) {
  testdev::Options options;
  options.defect = testdev::Defect::BROKEN_DEFECT;
  // Ignoring setCurrentDevice needs a backend that keeps the current device.
  options.keeps_current = options.defect == testdev::Defect::SetCurrentDeviceIgnored;
  registrar.registerBackend(
      BROKEN_TYPE, std::make_unique<testdev::TestdevBackend>(options), BROKEN_GROUPS);
}

}  // namespace

ACCEL_DEFINE_PLUGIN_ADAPTER(BROKEN_TYPE, "0.2.0", registerBroken);
