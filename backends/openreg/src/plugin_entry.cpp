// The plugin entry of libaccel_openreg.so: what accel::loadBackend() and the
// ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload call. Registration itself is
// accel::openreg::registerBackend(), which programs that link the library
// call directly; both paths register the backend once.
#include "accel/openreg/backend.h"
#include "accel/plugin.h"

namespace {

void registerOpenRegPlugin() { (void)accel::openreg::registerBackend(); }

}  // namespace

ACCEL_DEFINE_PLUGIN(accel::openreg::kDeviceTypeName, ACCEL_OPENREG_VERSION,
                    registerOpenRegPlugin);
