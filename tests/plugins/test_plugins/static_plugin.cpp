// A plugin that registers a hooks factory from a static initialiser
// (ACCEL_REGISTER_HOOKS) and has no register function: its registration runs
// inside dlopen, and the loader holds it back until the version handshake has
// passed. Built several ways: PLUGTEST_TYPE names the device type,
// PLUGTEST_API_VERSION / PLUGTEST_MIN_CORE_API_VERSION set the handshake, and
// PLUGTEST_NO_ENTRY leaves the entry out (a plain library that registers).
#include "accel/plugin.h"
#include "simple_hooks.h"

#ifndef PLUGTEST_TYPE
#define PLUGTEST_TYPE "plugtest_static"
#endif
#ifndef PLUGTEST_API_VERSION
#define PLUGTEST_API_VERSION accel::kPluginApiVersion
#endif
#ifndef PLUGTEST_MIN_CORE_API_VERSION
#define PLUGTEST_MIN_CORE_API_VERSION accel::kPluginApiVersion
#endif

namespace {
class StaticHooks final : public accel::plugtest::SimpleHooks {
 public:
  StaticHooks() : SimpleHooks(accel::registerDeviceType(PLUGTEST_TYPE), 3) {}
};
}  // namespace

ACCEL_REGISTER_HOOKS(StaticHooks, PLUGTEST_TYPE);

#ifndef PLUGTEST_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const accel::PluginEntry*
ACCEL_PLUGIN_ENTRY() {
  static const accel::PluginEntry entry{PLUGTEST_API_VERSION,
                                        PLUGTEST_MIN_CORE_API_VERSION, PLUGTEST_TYPE,
                                        "0.0.1", nullptr};
  return &entry;
}
#endif
