// The CUDA runtime entry points of the double: devices, streams, events,
// memory and copies. Captures and graphs are in double_capture.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cuda_double.h"
#include "double_runtime.h"

namespace cuda_double {

cudaError_t record(cudaError_t status) {
  if (status != cudaSuccess) thread().last_error = status;
  return status;
}

CUctx_st* runtimeContext(State& s) {
  ThreadState& self = thread();
  // CUDA: Programming Guide, "Initialization" / Runtime API, "Device
  // Management": without a current context, the runtime makes the primary
  // context of the thread's device (cudaSetDevice's, 0 by default) current,
  // creating it.
  if (self.current == nullptr) {
    CUctx_st& context = s.contexts[static_cast<std::size_t>(self.device)];
    context.active = true;
    self.current = &context;
  }
  return self.current;
}

cudaError_t resolveStream(State& s, cudaStream_t stream, CUstream_st** out) {
  if (stream == nullptr || stream == cudaStreamLegacy) {
    *out = s.legacy(runtimeContext(s)->device);
    return cudaSuccess;
  }
  if (s.streams.count(stream) == 0) return cudaErrorInvalidResourceHandle;
  *out = stream;
  return cudaSuccess;
}

std::vector<Range> deviceRanges(State& s, std::initializer_list<Range> ranges) {
  std::vector<Range> out;
  for (const Range& range : ranges) {
    if (range.bytes > 0 && s.find(range.begin, 1) != nullptr) out.push_back(range);
  }
  return out;
}

}  // namespace cuda_double

using namespace cuda_double;

extern "C" {

cudaError_t cudaGetLastError() {
  const cudaError_t status = thread().last_error;
  thread().last_error = cudaSuccess;
  return status;
}

cudaError_t cudaPeekAtLastError() { return thread().last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define CUDA_DOUBLE_NAME(e) \
  case e:                   \
    return #e;
    CUDA_DOUBLE_NAME(cudaSuccess)
    CUDA_DOUBLE_NAME(cudaErrorInvalidValue)
    CUDA_DOUBLE_NAME(cudaErrorMemoryAllocation)
    CUDA_DOUBLE_NAME(cudaErrorInvalidDevice)
    CUDA_DOUBLE_NAME(cudaErrorInvalidResourceHandle)
    CUDA_DOUBLE_NAME(cudaErrorNotReady)
    CUDA_DOUBLE_NAME(cudaErrorIllegalState)
    CUDA_DOUBLE_NAME(cudaErrorStreamCaptureUnsupported)
    CUDA_DOUBLE_NAME(cudaErrorStreamCaptureInvalidated)
    CUDA_DOUBLE_NAME(cudaErrorStreamCaptureUnmatched)
    CUDA_DOUBLE_NAME(cudaErrorStreamCaptureUnjoined)
    CUDA_DOUBLE_NAME(cudaErrorStreamCaptureIsolation)
    CUDA_DOUBLE_NAME(cudaErrorStreamCaptureWrongThread)
    CUDA_DOUBLE_NAME(cudaErrorCapturedEvent)
    CUDA_DOUBLE_NAME(cudaErrorPeerAccessAlreadyEnabled)
    CUDA_DOUBLE_NAME(cudaErrorPeerAccessUnsupported)
    CUDA_DOUBLE_NAME(cudaErrorNoDevice)
#undef CUDA_DOUBLE_NAME
    default:
      return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "an error of the CUDA runtime double";
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = State::get().device_count;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (device < 0 || device >= s.device_count) return record(cudaErrorInvalidDevice);
  // CUDA: Runtime API, cudaSetDevice: since CUDA 12.0 it initialises the
  // device's primary context and makes it current on the thread.
  ThreadState& self = thread();
  self.device = device;
  CUctx_st& context = s.contexts[static_cast<std::size_t>(device)];
  context.active = true;
  self.current = &context;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  const ThreadState& self = thread();
  *device = self.current != nullptr ? self.current->device : self.device;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  const int device = runtimeContext(s)->device;
  // CUDA: Programming Guide, "Prohibited and Unhandled Operations": it is
  // invalid to synchronize a device or context while one of its streams is
  // capturing; the capture is invalidated.
  if (s.capturing(device)) {
    for (const auto& capture : s.captures) {
      if (capture->device == device) s.invalidate(*capture, "cudaDeviceSynchronize");
    }
    return record(cudaErrorStreamCaptureUnsupported);
  }
  s.drainDevice(lock, device);
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  State& s = State::get();
  if (device < 0 || device >= s.device_count) return record(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "CUDA runtime double %d", device);
  prop->totalGlobalMem = s.capacity;
  prop->multiProcessorCount = 4;
  prop->major = 9;
  prop->minor = 0;
  prop->warpSize = 32;
  prop->maxThreadsPerMultiProcessor = 2048;
  prop->l2CacheSize = 1 << 20;
  for (int i = 0; i < 16; ++i) prop->uuid.bytes[i] = static_cast<char>(device * 16 + i);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (device < 0 || device >= State::get().device_count) {
    return record(cudaErrorInvalidDevice);
  }
  switch (attribute) {
    case cudaDevAttrComputeCapabilityMajor:
      *value = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = 0;
      return cudaSuccess;
    default:
      return record(cudaErrorInvalidValue);
  }
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  (void)runtimeContext(s);
  // What an H100 reports: 0 (default, least) to -5 (greatest).
  if (least != nullptr) *least = 0;
  if (greatest != nullptr) *greatest = kGreatestPriority;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags,
                                         int priority) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (stream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) {
    return record(cudaErrorInvalidValue);
  }
  // CUDA: Runtime API, cudaStreamCreateWithPriority: a priority outside
  // cudaDeviceGetStreamPriorityRange's range is clamped into it.
  priority = std::clamp(priority, kGreatestPriority, 0);
  *stream = s.newStream(runtimeContext(s)->device, flags, priority, /*legacy=*/false);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  return cudaStreamCreateWithPriority(stream, flags, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithPriority(stream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  *priority = native->priority;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (stream == nullptr || s.streams.count(stream) == 0) {
    return record(cudaErrorInvalidResourceHandle);
  }
  // Its worker finishes the queued work and stays; the handle is given out
  // again by a later stream creation (State::newStream).
  s.streams.erase(stream);
  s.destroyed.push_back(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (device == nullptr) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  *device = native->device;
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  // CUDA: Programming Guide, "Prohibited and Unhandled Operations": querying
  // a capturing stream is invalid and invalidates its capture.
  if (native->capture) {
    s.invalidate(*native->capture, "cudaStreamQuery of a capturing stream");
    return record(cudaErrorStreamCaptureUnsupported);
  }
  return native->completed >= native->enqueued ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  if (native->capture) {  // as cudaStreamQuery
    s.invalidate(*native->capture, "cudaStreamSynchronize of a capturing stream");
    return record(cudaErrorStreamCaptureUnsupported);
  }
  s.drain(lock, native);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  Work work;
  work.run = [fn, data] { fn(data); };
  work.device = native->device;
  return record(s.submit(native, std::move(work)));
}

cudaError_t cuda_double_launch(cudaStream_t stream, void (*fn)(const void*),
                               const void* args, std::size_t args_bytes,
                               const cuda_double_range* memory, std::size_t count) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  // CUDA: Runtime API, cudaLaunchKernel: the stream must belong to the
  // current context (its device); otherwise cudaErrorInvalidResourceHandle.
  if (runtimeContext(s)->device != native->device) {
    return record(cudaErrorInvalidResourceHandle);
  }
  auto copy = std::make_shared<std::vector<unsigned char>>(
      static_cast<const unsigned char*>(args),
      static_cast<const unsigned char*>(args) + args_bytes);
  Work work;
  work.run = [fn, copy] { fn(copy->data()); };
  work.device = native->device;
  for (std::size_t i = 0; i < count; ++i) {
    if (memory[i].bytes == 0) continue;
    work.memory.push_back(
        {reinterpret_cast<std::uintptr_t>(memory[i].begin), memory[i].bytes});
  }
  work.kernel = true;
  return record(s.submit(native, std::move(work)));
}

int cuda_double_stream_waits_for_event(cudaStream_t stream) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  return s.streams.count(stream) != 0 && stream->waiting_for_event ? 1 : 0;
}

}  // extern "C"
