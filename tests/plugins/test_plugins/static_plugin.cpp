// A plugin that registers a hooks factory from a static initialiser
// (ACCEL_REGISTER_HOOKS) and has no register function: the loader finds what
// it registered by comparing the registered types before and after dlopen.
#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
class StaticHooks final : public accel::plugtest::SimpleHooks {
 public:
  StaticHooks() : SimpleHooks(accel::registerDeviceType("plugtest_static"), 3) {}
};
}  // namespace

ACCEL_REGISTER_HOOKS(StaticHooks, "plugtest_static");

extern "C" __attribute__((visibility("default"))) const accel::PluginEntry*
ACCEL_PLUGIN_ENTRY() {
  static const accel::PluginEntry entry{accel::kPluginApiVersion,
                                        accel::kPluginApiVersion, "plugtest_static",
                                        "0.0.1", nullptr};
  return &entry;
}
