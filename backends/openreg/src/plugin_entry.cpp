// The plugin entry of libaccel_openreg.so: what the loader (accel::loadBackend,
// the ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload) negotiates with, and what
// a program that links openreg loads through accel_core_load_entry
// (accel::openreg::registerBackend). It creates the openreg backend over the
// process environment, registers it on the plugin adapter (whose Registrar
// attaches the core to it), and publishes it for openreg's extension
// interface once the core accepted it (registered_backend.h).
#include <cstdlib>
#include <memory>

#include "accel/plugin_adapter.h"
#include "openreg_backend.h"
#include "registered_backend.h"

namespace {

void registerOpenReg(accel::adapter::Registrar& registrar) {
  using accel::openreg::detail::OpenRegBackend;
  auto backend = std::make_unique<OpenRegBackend>(
      [](const char* variable) -> const char* { return std::getenv(variable); });
  OpenRegBackend& registered = *backend;
  // Throws, having destroyed the backend, when the core refuses it.
  registrar.registerBackend("openreg", std::move(backend),
                            ACCEL_GROUP_DEVICE | ACCEL_GROUP_STREAMS |
                                ACCEL_GROUP_EVENTS | ACCEL_GROUP_MEMORY |
                                ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS |
                                ACCEL_GROUP_COPIES | ACCEL_GROUP_FILL);
  accel::openreg::detail::publishRegisteredBackend(registered);
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
