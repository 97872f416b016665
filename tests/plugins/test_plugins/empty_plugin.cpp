// A plugin whose register function returns without registering anything.
#include "accel/plugin.h"

namespace {
void registerNothing(accel::Registrar&) {}
}  // namespace

ACCEL_DEFINE_PLUGIN("plugtest_empty", "0.0.1", registerNothing);
