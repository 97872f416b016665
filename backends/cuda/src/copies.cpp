// The copies group on CUDA: cudaMemcpyAsync on the stream's CUDA stream.
//
// cudaMemcpyAsync already behaves as the contract asks (CUDA Runtime API,
// "API synchronization behavior"): with pinned host memory it returns at
// once and the copy runs in stream order; from pageable memory it returns
// once the source is staged; to pageable memory, once the copy is done.
// Device-to-device copies between two devices go through unified addressing
// (cudaMemcpyDeviceToDevice on either device's stream). The core has checked
// everything the copy's contract asks of memory its caches handed out (a
// device range inside one live block, a host range inside its pinned block,
// another backend's memory) and records the stream on a pinned block, so
// that a block freed while its copy is queued waits for it (hooks.h). What
// is left here is what only the driver knows: a host side that is CUDA
// device memory the core's cache did not hand out (another library's
// cudaMalloc), which the explicit kind would otherwise misread.
#include <cuda_runtime_api.h>

#include "accel/error.h"
#include "cuda_error.h"
#include "cuda_hooks.h"
#include "current_device.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

// Refuses device (not managed) memory passed as the host side.
void requireHostMemory(HookId hook, const char* which, const void* ptr) {
  cudaPointerAttributes attributes{};
  if (!succeeded(cudaPointerGetAttributes(&attributes, ptr))) {
    (void)cudaGetLastError();  // not the runtime's memory at all: host memory
    return;
  }
  ACCEL_CHECK(attributes.type != cudaMemoryTypeDevice, InvalidArgument,
              hookInfo(hook).name, "(): ", which, " (", ptr,
              ") is memory of cuda:", attributes.device,
              ", not host memory; copy between devices with ",
              hookInfo(HookId::copyDeviceToDevice).name, "()");
}

void copyOn(HookId hook, void* dst, const void* src, std::size_t bytes, Stream stream,
            cudaMemcpyKind kind) {
  requireAvailable();
  DeviceContext context(stream.device.index());
  checkCuda(cudaMemcpyAsync(dst, src, bytes, kind, nativeStream(stream)),
            accel::detail::concat("cudaMemcpyAsync (", hookInfo(hook).name, " on ",
                                  stream, ")"));
}

}  // namespace

void CudaHooks::copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                     Stream stream) {
  requireHostMemory(HookId::copyHostToDevice, "src", src);
  copyOn(HookId::copyHostToDevice, dst, src, bytes, stream, cudaMemcpyHostToDevice);
}

void CudaHooks::copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                                     Stream stream) {
  requireHostMemory(HookId::copyDeviceToHost, "dst", dst);
  copyOn(HookId::copyDeviceToHost, dst, src, bytes, stream, cudaMemcpyDeviceToHost);
}

void CudaHooks::copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                       Stream stream) {
  copyOn(HookId::copyDeviceToDevice, dst, src, bytes, stream, cudaMemcpyDeviceToDevice);
}

}  // namespace accel::cuda::detail
