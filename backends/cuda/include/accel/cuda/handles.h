// Per-thread, per-device handles of the CUDA libraries, from the core's
// handle pools (accel/handle_pool.h): one line at the call site.
//
//   cublasHandle_t blas = accel::cuda::getCurrentCublasHandle();
//   cublasSgemm(blas, ...);   // runs on the current stream, with its workspace
//
// Each getter returns the calling thread's handle for the device (-1: the
// current device), creating it on that device the first time (or taking one
// an exited thread returned), and binds it to the thread's current stream of
// the device on every call:
//  - cuBLAS: cublasSetStream, then cublasSetWorkspace with the workspace of
//    this (handle, stream) pair (sized by CUBLAS_WORKSPACE_CONFIG, see
//    docs/cuda.md; allocated on first use of the pair, kept for the process).
//    Bound again on every call (the caller may have re-pointed the handle).
//  - cuBLASLt: no stream state; getCurrentCublasLtWorkspace gives the
//    workspace of (handle, current stream), CUBLASLT_WORKSPACE_SIZE KiB.
//  - cuSOLVER dense: cusolverDnSetStream.  cuDNN: cudnnSetStream.
//  - cuDSS (only in builds that found it, ACCEL_CUDA_HAVE_CUDSS): cudssSetStream.
// Handles are never destroyed once the process has begun to exit (the
// libraries' own exit handlers may have run); reserving then throws
// NotAvailable.
//
// Errors: NotAvailable without devices; InvalidArgument for a bad index;
// DeviceError (or OutOfMemory) when the library fails to create or bind.
// Thread-safety: thread-safe; a handle belongs to the thread that got it:
// do not pass it to another thread.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <cstddef>

#include "accel/cuda/export.h"
#include "accel/device.h"

#if defined(ACCEL_CUDA_HAVE_CUDNN)
#include <cudnn.h>
#endif
#if defined(ACCEL_CUDA_HAVE_CUDSS)
#include <cudss.h>
#endif

namespace accel::cuda {

ACCEL_CUDA_API cublasHandle_t getCurrentCublasHandle(DeviceIndex index = kCurrentDevice);

ACCEL_CUDA_API cublasLtHandle_t
getCurrentCublasLtHandle(DeviceIndex index = kCurrentDevice);

struct Workspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};
// The cuBLASLt workspace of this thread's Lt handle on the current stream.
ACCEL_CUDA_API Workspace getCurrentCublasLtWorkspace(DeviceIndex index = kCurrentDevice);

ACCEL_CUDA_API cusolverDnHandle_t
getCurrentCusolverDnHandle(DeviceIndex index = kCurrentDevice);

#if defined(ACCEL_CUDA_HAVE_CUDNN)
ACCEL_CUDA_API cudnnHandle_t getCurrentCudnnHandle(DeviceIndex index = kCurrentDevice);
#endif

#if defined(ACCEL_CUDA_HAVE_CUDSS)
ACCEL_CUDA_API cudssHandle_t getCurrentCudssHandle(DeviceIndex index = kCurrentDevice);
#endif

}  // namespace accel::cuda
