// The plugin entry of libaccel_openreg.so: what the loader (accel::loadBackend,
// the ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload) negotiates with, and what
// a program that links openreg loads through accel_core_load_entry
// (accel::openreg::registerBackend). It registers the openreg backend on the
// plugin adapter and hands the runtime the core it registered with.
#include <memory>

#include "accel/plugin_adapter.h"
#include "openreg_backend.h"
#include "runtime.h"

namespace {

void registerOpenReg(accel::adapter::Registrar& registrar) {
  auto backend = std::make_unique<accel::openreg::detail::OpenRegBackend>();
  accel::openreg::detail::OpenRegBackend& registered = *backend;
  registrar.registerBackend(
      "openreg", std::move(backend),
      ACCEL_GROUP_DEVICE | ACCEL_GROUP_STREAMS | ACCEL_GROUP_EVENTS | ACCEL_GROUP_MEMORY |
          ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS | ACCEL_GROUP_COPIES);
  accel::openreg::detail::Runtime::instance().attach(registered.core());
}

}  // namespace

// openreg needs plugin API 1.2 (block uses, the current stream, diverted
// allocations, the reference fill): older cores refuse it at negotiation.
ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE("openreg", ACCEL_OPENREG_VERSION, registerOpenReg, 2);

// The entry under openreg's own name as well: a program that links several
// plugins (Python's _C links openreg's API) reaches each one's entry by its
// name, while the loader looks up accel_plugin_negotiate in the one library
// it opened. -fno-semantic-interposition binds the call inside the plugin.
extern "C" ACCEL_PLUGIN_EXPORT accel_status
accel_openreg_negotiate(const accel_core_offer* offer, accel_plugin_answer* answer) {
  return accel_plugin_negotiate(offer, answer);
}
