// The plugin entry of libaccel_cuda.so: what accel::loadBackend() and the
// ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload call; it registers the hooks
// into the loader's Registrar. Programs that link the library call
// accel::cuda::registerBackend() instead.
#include <memory>

#include "accel/plugin.h"
#include "accel/registrar.h"
#include "cuda_hooks.h"

namespace {

void registerCudaPlugin(accel::Registrar& registrar) {
  registrar.registerHooks(std::make_unique<accel::cuda::detail::CudaHooks>());
}

}  // namespace

ACCEL_DEFINE_PLUGIN("cuda", ACCEL_CUDA_VERSION, registerCudaPlugin);
