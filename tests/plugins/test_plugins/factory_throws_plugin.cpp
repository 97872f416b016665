// A plugin that registers a hooks factory which throws (a driver that fails
// when the backend is first created).
#include <memory>
#include <stdexcept>

#include "accel/plugin.h"

namespace {
void registerBackend(accel::Registrar& registrar) {
  registrar.registerHooksFactory("plugtest_factory_throws",
                                 []() -> std::unique_ptr<accel::AcceleratorHooks> {
                                   throw std::runtime_error("driver exploded (plugtest)");
                                 });
}
}  // namespace

ACCEL_DEFINE_PLUGIN("plugtest_factory_throws", "0.0.1", registerBackend);
