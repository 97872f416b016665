// The plugin entry of libaccel_opencl.so: what the loader (accel::loadBackend,
// the ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload) negotiates with, and what
// a program that links the OpenCL API loads through accel_core_load_entry
// (accel::opencl::registerBackend). It registers the opencl backend on the
// plugin adapter. Registering lists no device: that waits for the first
// probe.
#include <memory>

#include "accel/plugin_adapter.h"
#include "opencl_backend.h"

namespace {

void registerOpenCl(accel::adapter::Registrar& registrar) {
  auto backend = std::make_unique<accel::opencl::detail::OpenClBackend>();
  accel::opencl::detail::OpenClBackend& registered = *backend;
  registrar.registerBackend("opencl", std::move(backend),
                            ACCEL_GROUP_DEVICE | ACCEL_GROUP_STREAMS |
                                ACCEL_GROUP_EVENTS | ACCEL_GROUP_MEMORY |
                                ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS |
                                ACCEL_GROUP_COPIES | ACCEL_GROUP_FILL);
  accel::opencl::detail::setRegisteredBackend(registered);
}

}  // namespace

// The backend needs plugin API 1.2 (block lookups and uses, the current
// stream, the reference fill's checks and draw counts): older cores refuse
// it at negotiation.
ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE("opencl", ACCEL_OPENCL_VERSION, registerOpenCl, 2);

// The entry under the backend's own name as well: a program that links
// several plugins (Python's _C links openreg's and OpenCL's APIs) reaches
// each one's entry by its name, while the loader looks up
// accel_plugin_negotiate in the one library it opened.
// -fno-semantic-interposition binds the call inside the plugin.
extern "C" ACCEL_PLUGIN_EXPORT accel_status
accel_opencl_negotiate(const accel_core_offer* offer, accel_plugin_answer* answer) {
  return accel_plugin_negotiate(offer, answer);
}
