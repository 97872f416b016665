// A plugin that keeps the Registrar& it was given and uses it after its
// register function returned (through plugtest_register_late, which the test
// calls): that use must be a clear error.
#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
accel::Registrar* g_kept = nullptr;

void registerBackend(accel::Registrar& registrar) {
  g_kept = &registrar;
  accel::plugtest::registerSimpleBackend(registrar, "plugtest_late_registrar", 1);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void plugtest_register_late() {
  accel::plugtest::registerSimpleBackend(*g_kept, "plugtest_late_registrar_more", 1);
}

ACCEL_DEFINE_PLUGIN("plugtest_late_registrar", "0.0.1", registerBackend);
