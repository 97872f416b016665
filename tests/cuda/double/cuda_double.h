// The CUDA runtime double's own entry points, for tests (docs/cuda.md, "The
// runtime double").
//
// The double (libcuda.so.1 of tests/cuda/double) implements the CUDA runtime,
// driver and library entry points the cuda backend calls, on the host, and
// returns CUDA's documented errors where CUDA's rules are broken. Some misuse
// has no error code on a GPU (a kernel that reads unmapped memory faults
// later, asynchronously); the double records such misuse as a violation,
// skips the offending work and goes on, and tests assert that none was
// recorded.
//
// Thread-safety: every function is thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

extern "C" {

// Violations recorded since the last reset; copies the last one's text
// into `text` (NUL-terminated, at most `capacity` bytes) when not null.
int cuda_double_violations(char* text, std::size_t capacity);
void cuda_double_reset_violations();

// Device memory a kernel reads or writes: [begin, begin + bytes).
struct cuda_double_range {
  const void* begin;
  std::size_t bytes;
};

// The double's stand-in for a kernel launch: runs fn(args) on `stream` in
// stream order (or records it into the stream's capture). `args` (args_bytes)
// is copied; `memory` (`count` ranges) is every piece of device memory the
// kernel reads or writes, each of which must be live device memory the
// stream's device may access (or pinned host memory) when the work runs;
// anything else is a violation. Returns like cudaLaunchKernel.
cudaError_t cuda_double_launch(cudaStream_t stream, void (*fn)(const void* args),
                               const void* args, std::size_t args_bytes,
                               const cuda_double_range* memory, std::size_t count);

// Runs fn(arg) once, on the thread that calls cudaStreamBeginCapture, right
// after the next capture has begun (outside the double's lock), before the
// call returns: what another thread may do in that moment.
void cuda_double_after_next_capture_begins(void (*fn)(void* arg), void* arg);

// Runs fn(arg) once, on the thread that calls cudaFree next, as the call
// begins (outside the double's lock, before CUDA's rules are checked): what
// another thread may do between a caller's decision to free and the free.
void cuda_double_before_next_free(void (*fn)(void* arg), void* arg);

// Whether `stream`'s worker waits now for an event (cudaStreamWaitEvent).
int cuda_double_stream_waits_for_event(cudaStream_t stream);

// Threads blocked now in a call that waits for device work
// (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
// cudaFree's implicit synchronisation).
int cuda_double_waiting_threads();

// The workspace last set on a cuBLAS handle (cublasSetWorkspace), 0 when the
// handle uses cuBLAS's own. Returns 0 on success, -1 for an unknown handle.
int cuda_double_cublas_workspace(const void* handle, void** workspace,
                                 std::size_t* bytes);

// CUDA_MODULE_LOADING as the first cuInit saw it ("" when unset).
const char* cuda_double_module_loading_at_init();

// Live captures (cudaStreamBeginCapture without its end) in the process.
int cuda_double_active_captures();

}  // extern "C"
