// The plugin entry of libaccel_openreg.so: what accel::loadBackend() and the
// ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload call. It registers the openreg
// hooks into the loader's registrar, which the loader commits after the
// version handshake. Programs that link the library call
// accel::openreg::registerBackend() instead, which adopts hooks the plugin
// entry registered, so both paths end with one backend.
#include <memory>

#include "accel/openreg/backend.h"
#include "accel/plugin.h"
#include "openreg_hooks.h"

namespace {

void registerOpenRegPlugin(accel::Registrar& registrar) {
  accel::DeviceType type = registrar.registerDeviceType(accel::openreg::kDeviceTypeName);
  registrar.registerHooks(std::make_unique<accel::openreg::detail::OpenRegHooks>(type));
}

}  // namespace

ACCEL_DEFINE_PLUGIN(accel::openreg::kDeviceTypeName, ACCEL_OPENREG_VERSION,
                    registerOpenRegPlugin);
