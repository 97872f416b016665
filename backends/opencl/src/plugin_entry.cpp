// The plugin entry of libaccel_opencl.so: what accel::loadBackend() and the
// ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload call. It registers the device
// type and the hooks into the loader's registrar; programs that link the
// library call accel::opencl::registerBackend() instead, which adopts hooks
// the plugin entry registered.
#include <memory>

#include "accel/opencl/opencl.h"
#include "accel/plugin.h"
#include "accel/registrar.h"
#include "opencl_hooks.h"

namespace {

void registerOpenClPlugin(accel::Registrar& registrar) {
  const accel::DeviceType type =
      registrar.registerDeviceType(accel::opencl::kDeviceTypeName);
  registrar.registerHooks(std::make_unique<accel::opencl::detail::OpenClHooks>(type));
}

}  // namespace

ACCEL_DEFINE_PLUGIN(accel::opencl::kDeviceTypeName, ACCEL_OPENCL_VERSION,
                    registerOpenClPlugin);
