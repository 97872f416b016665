// A plugin whose register function throws, like a backend whose driver fails
// to start.
#include <stdexcept>

#include "accel/plugin.h"

namespace {
void registerBackend(accel::Registrar&) {
  throw std::runtime_error("simulated driver failure (plugtest)");
}
}  // namespace

ACCEL_DEFINE_PLUGIN("plugtest_throws", "0.0.1", registerBackend);
