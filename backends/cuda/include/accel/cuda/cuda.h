// The cuda backend's own API: registration, why it is (not) available, and
// the bridge between accel::Stream and CUDA streams.
//
// Most code reaches the backend through the hooks (accel::getHooks(
// DeviceType::CUDA)) after loading libaccel_cuda.so as a plugin; this header
// is for programs that link the plugin library and need CUDA-specific things:
// the native stream to launch their own kernels on, or wrapping a stream that
// another library created.
//
// Thread-safety: every function is thread-safe.
// Lifetime: the registered hooks and every stream table are never destroyed.
#pragma once

#include <string>

#include "accel/cuda/export.h"
#include "accel/hooks.h"
#include "accel/stream.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace accel::cuda {

// What the first probe found. device_count is 0 whenever `reason` is set:
// "no NVIDIA driver: libcuda.so.1 not found (...)", "driver present, 0
// devices", "driver too old for CUDA 13 runtime: ...".
struct Availability {
  int device_count = 0;
  std::string reason;       // empty when devices were found
  int driver_version = 0;   // 1000 * major + 10 * minor; 0 without a driver
  int runtime_version = 0;  // the CUDA runtime the plugin was built with
};

// The outcome of the driver probe (run once per process; creates no context).
// Throws only std::bad_alloc.
ACCEL_CUDA_API Availability availability();

// Registers the cuda plugin this program links (libaccel_cuda.so) once per
// process, through its entry, and returns the cuda hooks; later calls, and
// calls after the plugin was loaded from that same file (ACCEL_PLUGINS,
// loadBackend), return the same object. Thread-safe. Throws NotAvailable
// when the core refuses the plugin or 'cuda' has a backend from another
// file (accel/linked_plugin.h).
ACCEL_CUDA_API AcceleratorHooks& registerBackend();

// The CUDA stream behind `stream` (nullptr for the default stream, id 0).
// Thread-safe. Throws InvalidArgument for a stream of another device type
// or a pool-stream id the backend never handed out; an external-stream id
// (wrapExternalStream) is checked only for its device, its other bits being
// the stream's address: pass only ids the backend gave.
ACCEL_CUDA_API CUstream_st* nativeStream(Stream stream);

// Names an existing CUDA stream of device `index` as an accel::Stream, so it
// can be made current (StreamGuard) and used with events and graphs. The
// same CUDA stream always gets the same id; the id encodes the stream's
// address, so nothing is kept per wrapped stream, and a stream created at a
// destroyed one's address is wrapped afresh (for its own device: asked of
// cudaStreamGetDevice with device `index`'s context current, which a stream
// of that device implies exists). The caller keeps the stream alive while it
// is in use. Thread-safe. Throws InvalidArgument for a null stream, a bad
// index, a stream of another device or a handle CUDA does not know;
// NotAvailable when the backend is not.
ACCEL_CUDA_API Stream wrapExternalStream(CUstream_st* stream, DeviceIndex index);

}  // namespace accel::cuda
