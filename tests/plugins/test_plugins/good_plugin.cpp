// A well-formed plugin: registers PLUGTEST_TYPE with PLUGTEST_DEVICES devices.
// Built several times under different type names (one per test that needs a
// fresh plugin), with 0 devices for the NoDevices case, and with an
// idempotent register function (PLUGTEST_IDEMPOTENT), and with a register
// function that, once it has registered, waits for another thread to register
// the type PLUGTEST_WAIT_FOR (at most a minute), so that the other
// registration falls inside the load.
#include <chrono>
#include <thread>

#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
void registerBackend(accel::Registrar& registrar) {
#ifdef PLUGTEST_IDEMPOTENT
  // Like a backend that programs may also link and register directly: a
  // second call does nothing.
  if (auto type = accel::findDeviceType(PLUGTEST_TYPE);
      type && accel::isHooksRegistered(*type)) {
    return;
  }
#endif
  accel::plugtest::registerSimpleBackend(registrar, PLUGTEST_TYPE, PLUGTEST_DEVICES);
#ifdef PLUGTEST_WAIT_FOR
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    auto other = accel::findDeviceType(PLUGTEST_WAIT_FOR);
    if (other && accel::isHooksRegistered(*other)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
#endif
}
}  // namespace

ACCEL_DEFINE_PLUGIN(PLUGTEST_TYPE, "1.2.3", registerBackend);
