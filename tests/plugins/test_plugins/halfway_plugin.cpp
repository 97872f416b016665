// Plugins whose registration goes wrong after they registered something:
// PLUGTEST_TWICE registers its type a second time, otherwise the register
// function throws after registering. Nothing they registered may stay.
#include <stdexcept>

#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
void registerBackend(accel::Registrar& registrar) {
  accel::plugtest::registerSimpleBackend(registrar, PLUGTEST_TYPE, 1);
  accel::plugtest::registerSimpleBackend(registrar, PLUGTEST_TYPE "_second", 1);
#ifdef PLUGTEST_TWICE
  accel::plugtest::registerSimpleBackend(registrar, PLUGTEST_TYPE, 1);
#else
  throw std::runtime_error("driver failed half-way (plugtest)");
#endif
}
}  // namespace

ACCEL_DEFINE_PLUGIN(PLUGTEST_TYPE, "0.0.1", registerBackend);
