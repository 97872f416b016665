// The plugin entry of libaccel_cuda.so: what accel::loadBackend() and the
// ACCEL_PLUGINS / ACCEL_PLUGIN_PATH autoload call. Programs that link the
// library call accel::cuda::registerBackend() directly; both register once.
#include "accel/cuda/cuda.h"
#include "accel/plugin.h"

namespace {

void registerCudaPlugin() { (void)accel::cuda::registerBackend(); }

}  // namespace

ACCEL_DEFINE_PLUGIN("cuda", ACCEL_CUDA_VERSION, registerCudaPlugin);
