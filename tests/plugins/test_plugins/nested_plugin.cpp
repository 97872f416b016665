// A plugin whose register function tries to load another plugin, which the
// loader refuses (it would wait for itself), and to autoload, which returns
// at once.
#include "accel/plugin.h"
#include "simple_hooks.h"

namespace {
void registerBackend(accel::Registrar& registrar) {
  if (!accel::autoloadPlugins().empty())
    throw std::logic_error("autoload ran inside a load");
  accel::loadBackend("/nonexistent/libaccel_other.so");
  accel::plugtest::registerSimpleBackend(registrar, "plugtest_nested", 1);
}
}  // namespace

ACCEL_DEFINE_PLUGIN("plugtest_nested", "0.0.1", registerBackend);
