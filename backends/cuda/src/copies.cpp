// The copies group on CUDA: cudaMemcpyAsync on the stream's CUDA stream.
//
// With pinned host memory cudaMemcpyAsync returns at once and the copy runs
// in stream order, as the contract asks. With pageable host memory CUDA's
// text (Runtime API, "API synchronization behavior") allows two behaviours:
// the call "might be synchronous", and on systems with HMM or ATS (or future
// drivers) it may return before a pageable source is read or a pageable
// destination is written. The contract promises that the host side may be
// reused when the call returns, so a pageable copy synchronises its stream
// afterwards (free where the copy was synchronous already).
// Device-to-device copies between two devices go through unified addressing
// (cudaMemcpyDeviceToDevice on either device's stream). The core has checked
// everything the copy's contract asks of memory its caches handed out (a
// device range inside one live block, a host range inside its pinned block,
// another backend's memory) and records the stream on a pinned block, so
// that a block freed while its copy is queued waits for it (hooks.h). What
// is left here is what only the driver knows: a host side that is CUDA
// device memory the core's cache did not hand out (another library's
// cudaMalloc), which the explicit kind would otherwise misread, and a copy
// of pinned memory the core does not know on a capturing stream, which the
// core's synchronisation after it would invalidate (refused before it is
// enqueued).
#include <cuda_runtime_api.h>

#include "accel/adapter/failure.h"
#include "accel/hook_catalogue.h"
#include "cuda_backend.h"
#include "cuda_error.h"
#include "current_device.h"
#include "device_memory.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

// Refuses device (not managed) memory passed as the host side; returns
// whether the host side is pageable (memory the runtime does not know).
// Runs with the stream's device current: cudaPointerGetAttributes, like any
// runtime call, would otherwise create cuda:0's primary context on a thread
// without a current context.
bool requireHostMemory(HookId hook, const char* which, const void* ptr) {
  cudaPointerAttributes attributes{};
  if (!succeeded(cudaPointerGetAttributes(&attributes, ptr))) {
    (void)cudaGetLastError();  // not the runtime's memory at all: host memory
    return true;
  }
  ACCEL_ADAPTER_CHECK(attributes.type != cudaMemoryTypeDevice, adapter::InvalidArgument,
                      hookInfo(hook).name, "(): ", which, " (", ptr,
                      ") is memory of cuda:", attributes.device,
                      ", not host memory; copy between devices with ",
                      hookInfo(HookId::copyDeviceToDevice).name, "()");
  return attributes.type == cudaMemoryTypeUnregistered;
}

// Pinned memory the core's pinned cache did not hand out (cudaHostAlloc'ed,
// cudaHostRegister'ed, another library's pinned tensors) is made safe to
// free once the call returns by the core synchronising the stream after the
// copy (hooks.h, copies group). On a capturing stream that synchronisation
// is prohibited: it would invalidate the capture after the copy was
// captured. The copy is refused before anything is enqueued instead, so the
// capture stays valid. Memory of the backend's pinned cache needs no
// synchronisation (the core records the stream on its block) and is copied.
void refuseForeignPinnedWhileCapturing(HookId hook, const char* which, const void* ptr,
                                       adapter::Stream stream, cudaStream_t native) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamIsCapturing(native, &status), "cudaStreamIsCapturing");
  ACCEL_ADAPTER_CHECK(
      status == cudaStreamCaptureStatusNone, adapter::InvalidArgument,
      hookInfo(hook).name, "(): ", which, " (", ptr,
      ") is pinned host memory that did not come from ",
      hookInfo(HookId::getPinnedMemoryAllocator).name, "() (cudaHostAlloc, ",
      "cudaHostRegister or another library's), and ", describe(stream),
      " is capturing a graph: the call would have to synchronise the stream "
      "before returning, which a capture forbids. Copy from memory of ",
      hookInfo(HookId::getPinnedMemoryAllocator).name,
      "() while capturing, or make this copy outside the capture");
}

// `host` names the host side ("src"/"dst") and `host_ptr` is it; null for
// device-to-device copies. `foreign_pinned`: the host side is pinned memory
// the core's pinned cache does not hold.
void copyOn(HookId hook, void* dst, const void* src, std::size_t bytes,
            adapter::Stream stream, cudaMemcpyKind kind, const char* host,
            const void* host_ptr, bool foreign_pinned) {
  requireAvailable();
  DeviceContext context(stream.device);
  const bool pageable = host != nullptr && requireHostMemory(hook, host, host_ptr);
  const cudaStream_t native = nativeStream(stream);
  if (!pageable && foreign_pinned)
    refuseForeignPinnedWhileCapturing(hook, host, host_ptr, stream, native);
  checkCuda(cudaMemcpyAsync(dst, src, bytes, kind, native),
            adapter::concat("cudaMemcpyAsync (", hookInfo(hook).name, " on ",
                            describe(stream), ")"));
  if (pageable) {
    checkCuda(cudaStreamSynchronize(native),
              adapter::concat("cudaStreamSynchronize (", hookInfo(hook).name,
                              " from or to pageable memory, on ", describe(stream), ")"));
  }
}

// Whether `host` is pinned memory (as the driver says) that the core's
// pinned cache does not hold (its segments are the pinned memory's).
bool foreignPinned(const void* host) noexcept {
  return isPinnedPerDriver(host) && !pinnedMemory().holds(host);
}

}  // namespace

void CudaBackend::copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                                   adapter::Stream stream) {
  copyOn(HookId::copyHostToDevice, dst, src, bytes, stream, cudaMemcpyHostToDevice, "src",
         src, foreignPinned(src));
}

void CudaBackend::copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                                   adapter::Stream stream) {
  copyOn(HookId::copyDeviceToHost, dst, src, bytes, stream, cudaMemcpyDeviceToHost, "dst",
         dst, foreignPinned(dst));
}

void CudaBackend::copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                                     adapter::Stream stream) {
  copyOn(HookId::copyDeviceToDevice, dst, src, bytes, stream, cudaMemcpyDeviceToDevice,
         nullptr, nullptr, false);
}

}  // namespace accel::cuda::detail
