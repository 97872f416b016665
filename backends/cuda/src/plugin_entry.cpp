// The plugin entry of libaccel_cuda.so: what the loader (accel::loadBackend,
// the ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload) negotiates with, and what
// a program that links the CUDA API loads through accel_core_load_entry
// (accel::cuda::registerBackend). It registers the cuda backend on the
// plugin adapter. Registering probes nothing: the driver is opened on the
// first probe.
#include <memory>

#include "accel/plugin_adapter.h"
#include "cuda_backend.h"

namespace {

void registerCuda(accel::adapter::Registrar& registrar) {
  registrar.registerBackend("cuda", std::make_unique<accel::cuda::detail::CudaBackend>(),
                            ACCEL_GROUP_DEVICE | ACCEL_GROUP_STREAMS |
                                ACCEL_GROUP_EVENTS | ACCEL_GROUP_MEMORY |
                                ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS |
                                ACCEL_GROUP_COPIES | ACCEL_GROUP_FILL);
}

}  // namespace

// The backend needs plugin API 1.3 (a stream forked into a capture joins the
// capture's pool through join_capture; the fill group): older cores refuse
// it at negotiation.
ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE("cuda", ACCEL_CUDA_VERSION, registerCuda, 3);

// The entry under the backend's own name as well: a program that links
// several plugins reaches each one's entry by its name, while the loader
// looks up accel_plugin_negotiate in the one library it opened.
// -fno-semantic-interposition binds the call inside the plugin.
extern "C" ACCEL_PLUGIN_EXPORT accel_status
accel_cuda_negotiate(const accel_core_offer* offer, accel_plugin_answer* answer) {
  return accel_plugin_negotiate(offer, answer);
}
