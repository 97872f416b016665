// A plugin that registers through both a static registration
// (ACCEL_REGISTER_HOOKS, type PLUGTEST_STATIC_TYPE) and its register function
// (type PLUGTEST_TYPE). With PLUGTEST_STATIC_TYPE equal to PLUGTEST_TYPE the
// two collide, and the load must register nothing.
#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
class StaticHooks final : public accel::plugtest::SimpleHooks {
 public:
  StaticHooks() : SimpleHooks(accel::registerDeviceType(PLUGTEST_STATIC_TYPE), 2) {}
};

void registerBackend(accel::Registrar& registrar) {
  accel::plugtest::registerSimpleBackend(registrar, PLUGTEST_TYPE, 1);
}
}  // namespace

ACCEL_REGISTER_HOOKS(StaticHooks, PLUGTEST_STATIC_TYPE);
ACCEL_DEFINE_PLUGIN(PLUGTEST_TYPE, "0.0.1", registerBackend);
