// A plugin with a hand-written entry whose version fields are set by the
// build (PLUGTEST_API_VERSION, PLUGTEST_MIN_CORE_API_VERSION), to exercise
// both directions of the handshake. Registers PLUGTEST_TYPE if it gets to.
#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
void registerBackend(accel::Registrar& registrar) {
  accel::plugtest::registerSimpleBackend(registrar, PLUGTEST_TYPE, 1);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) const accel::PluginEntry*
ACCEL_PLUGIN_ENTRY() {
  static const accel::PluginEntry entry{PLUGTEST_API_VERSION,
                                        PLUGTEST_MIN_CORE_API_VERSION, PLUGTEST_TYPE,
                                        "9.9.9", &registerBackend};
  return &entry;
}
