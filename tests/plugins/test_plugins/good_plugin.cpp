// A well-formed plugin: registers PLUGTEST_TYPE with PLUGTEST_DEVICES devices.
// Built several times under different type names (one per test that needs a
// fresh plugin), with 0 devices for the NoDevices case, and with an
// idempotent register function (PLUGTEST_IDEMPOTENT).
#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
void registerBackend() {
#ifdef PLUGTEST_IDEMPOTENT
  // Like a backend that programs may also link and register directly: a
  // second call does nothing.
  if (auto type = accel::findDeviceType(PLUGTEST_TYPE);
      type && accel::isHooksRegistered(*type)) {
    return;
  }
#endif
  accel::plugtest::registerSimpleBackend(PLUGTEST_TYPE, PLUGTEST_DEVICES);
}
}  // namespace

ACCEL_DEFINE_PLUGIN(PLUGTEST_TYPE, "1.2.3", registerBackend);
