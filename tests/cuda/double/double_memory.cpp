// Memory and copies of the runtime double: device memory is host memory the
// double keeps books on, so tests read results directly.
#include <cstdlib>
#include <cstring>
#include <utility>

#include "double_runtime.h"

using namespace cuda_double;

namespace {

constexpr std::size_t kAlignment = 256;  // cudaMalloc's documented alignment

std::size_t rounded(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// Lock held. Frees a cudaMalloc or cudaHostAlloc block of `kind`.
cudaError_t release(State& s, std::unique_lock<std::mutex>& lock, void* ptr,
                    MemoryKind kind, const char* call) {
  if (ptr == nullptr) return cudaSuccess;
  if (const cudaError_t e = s.unsafeCall(call); e != cudaSuccess) return e;
  auto found = s.memory.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (found == s.memory.end() || found->second.kind != kind) return cudaErrorInvalidValue;
  // CUDA: Runtime API, "API synchronization behavior" and cudaFree: freeing
  // synchronises with the device's work, so work queued before the free
  // finishes first.
  s.drainDevice(lock, -1);
  found = s.memory.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (found == s.memory.end()) return cudaErrorInvalidValue;  // freed meanwhile
  if (kind == MemoryKind::Device) s.used[found->second.device] -= found->second.bytes;
  s.memory.erase(found);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t allocate(void** ptr, std::size_t bytes, MemoryKind kind, const char* call) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (ptr == nullptr) return record(cudaErrorInvalidValue);
  const int device = runtimeContext(s)->device;
  if (const cudaError_t e = s.unsafeCall(call); e != cudaSuccess) return record(e);
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;
  std::size_t& used = s.used[static_cast<std::size_t>(device)];
  if (kind == MemoryKind::Device && bytes > s.capacity - used) {
    return record(cudaErrorMemoryAllocation);
  }
  void* memory = std::aligned_alloc(kAlignment, rounded(bytes));
  if (memory == nullptr) return record(cudaErrorMemoryAllocation);
  if (kind == MemoryKind::Device) used += bytes;
  s.memory[reinterpret_cast<std::uintptr_t>(memory)] = {bytes, device, kind};
  *ptr = memory;
  return cudaSuccess;
}

// Lock held. A copy or set of `bytes` at dst (from src), in stream order on
// `stream`; synchronous with the host when `sync`, or when either side is
// pageable host memory unless State::pageable_async (CUDA: Runtime API, "API
// synchronization behavior": such a copy "might be synchronous"; with
// CUDA_DOUBLE_PAGEABLE_ASYNC=1 it returns before the copy ran, as it may on
// systems with HMM or ATS).
cudaError_t transfer(State& s, std::unique_lock<std::mutex>& lock, CUstream_st* stream,
                     void* dst, const void* src, int value, std::size_t bytes,
                     bool sync) {
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto from = reinterpret_cast<std::uintptr_t>(src);
  const bool pageable =
      s.find(d, 1) == nullptr || (src != nullptr && s.find(from, 1) == nullptr);
  if ((sync || pageable) && stream->capture) {
    // CUDA: Programming Guide, "Prohibited and Unhandled Operations": a
    // synchronous call on a capturing stream is invalid.
    s.invalidate(*stream->capture, "a synchronous copy on a capturing stream");
    return cudaErrorStreamCaptureUnsupported;
  }
  if (sync) {
    if (const cudaError_t e = s.unsafeCall("cudaMemcpy/cudaMemset"); e != cudaSuccess) {
      return e;
    }
  }
  Work work;
  work.device = stream->device;
  work.memory = deviceRanges(s, {{d, bytes}, {from, src != nullptr ? bytes : 0}});
  if (src != nullptr) {
    work.run = [dst, src, bytes] { std::memmove(dst, src, bytes); };
  } else {
    work.run = [dst, value, bytes] { std::memset(dst, value, bytes); };
  }
  if (const cudaError_t e = s.submit(stream, std::move(work)); e != cudaSuccess) return e;
  if (sync || (pageable && !s.pageable_async)) s.drain(lock, stream);
  return cudaSuccess;
}

cudaError_t transferOn(cudaStream_t stream, void* dst, const void* src, int value,
                       std::size_t bytes, bool sync) {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr) return record(cudaErrorInvalidValue);
  return record(transfer(s, lock, native, dst, src, value, bytes, sync));
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  return allocate(ptr, bytes, MemoryKind::Device, "cudaMalloc");
}

cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int) {
  return allocate(ptr, bytes, MemoryKind::Pinned, "cudaHostAlloc");
}

cudaError_t cudaMallocHost(void** ptr, size_t bytes) {
  return allocate(ptr, bytes, MemoryKind::Pinned, "cudaMallocHost");
}

cudaError_t cudaFree(void* ptr) {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  if (void (*before)(void*) = std::exchange(s.before_free, nullptr)) {
    void* arg = s.before_free_arg;
    lock.unlock();
    before(arg);
    lock.lock();
  }
  (void)runtimeContext(s);
  return record(release(s, lock, ptr, MemoryKind::Device, "cudaFree"));
}

cudaError_t cudaFreeHost(void* ptr) {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  (void)runtimeContext(s);
  return record(release(s, lock, ptr, MemoryKind::Pinned, "cudaFreeHost"));
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  const int device = runtimeContext(s)->device;
  *total = s.capacity;
  *free = s.capacity - s.used[static_cast<std::size_t>(device)];
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  if (src == nullptr && bytes > 0) return record(cudaErrorInvalidValue);
  return transferOn(nullptr, dst, src, 0, bytes, /*sync=*/true);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind,
                            cudaStream_t stream) {
  if (src == nullptr && bytes > 0) return record(cudaErrorInvalidValue);
  return transferOn(stream, dst, src, 0, bytes, /*sync=*/false);
}

cudaError_t cudaMemset(void* dst, int value, size_t bytes) {
  // CUDA: Runtime API, "API synchronization behavior": the synchronous
  // memset functions are asynchronous with respect to the host except when
  // the target is pinned host memory or Unified Memory. The double waits
  // only for pinned memory; a set of device memory runs on the legacy
  // stream in its order and may not have run when the call returns.
  bool pinned = false;
  {
    State& s = State::get();
    std::lock_guard lock(s.mutex);
    (void)runtimeContext(s);
    if (const cudaError_t e = s.unsafeCall("cudaMemset"); e != cudaSuccess)
      return record(e);
    const Allocation* target = s.find(reinterpret_cast<std::uintptr_t>(dst), 1);
    pinned = target != nullptr && target->kind == MemoryKind::Pinned;
  }
  return transferOn(nullptr, dst, nullptr, value, bytes, /*sync=*/pinned);
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream) {
  return transferOn(stream, dst, nullptr, value, bytes, /*sync=*/false);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  // CUDA: Programming Guide, "Initialization": like every runtime call that
  // is not a device-management query, it initialises the runtime on the
  // thread's current device, creating its primary context.
  (void)runtimeContext(s);
  if (attributes == nullptr) return record(cudaErrorInvalidValue);
  *attributes = cudaPointerAttributes{};
  const Allocation* found = s.find(reinterpret_cast<std::uintptr_t>(ptr), 1);
  if (found == nullptr) {
    attributes->type = cudaMemoryTypeUnregistered;
    return cudaSuccess;
  }
  attributes->type =
      found->kind == MemoryKind::Pinned ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  attributes->device = found->device;
  attributes->devicePointer = const_cast<void*>(ptr);
  attributes->hostPointer = const_cast<void*>(ptr);
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  const int count = State::get().device_count;
  if (device < 0 || device >= count || peer < 0 || peer >= count) {
    return record(cudaErrorInvalidDevice);
  }
  // CUDA_DOUBLE_NO_P2P=1: a machine whose GPUs cannot reach each other.
  *can = device != peer && !State::get().no_p2p ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  const int device = runtimeContext(s)->device;
  // CUDA: Runtime API, cudaDeviceEnablePeerAccess: flags must be 0; a peer
  // the device cannot access is cudaErrorPeerAccessUnsupported; enabling
  // twice is cudaErrorPeerAccessAlreadyEnabled.
  if (flags != 0) return record(cudaErrorInvalidValue);
  if (peer < 0 || peer >= s.device_count) return record(cudaErrorInvalidDevice);
  if (peer == device || s.no_p2p) return record(cudaErrorPeerAccessUnsupported);
  unsigned int& enabled = s.peer_enabled[static_cast<std::size_t>(device)];
  if ((enabled & (1u << peer)) != 0) return record(cudaErrorPeerAccessAlreadyEnabled);
  enabled |= 1u << peer;
  return cudaSuccess;
}

}  // extern "C"
