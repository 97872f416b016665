// The extension interface of libaccel_cuda.so: what the cuda backend's own
// API (accel/cuda/*.h, compiled into the programs that use it: the static
// library accel_cuda, backends/cuda/api) asks of the plugin beyond the hooks
// the core calls.
//
// Both sides are the cuda backend, built together, so the interface is C++;
// streams cross it as accel_stream and generators as the core's C handles,
// and nothing is thrown across it: each function returns a Status with the
// plugin's message, which the API throws as the library's error of that kind
// (accel::throwPluginFailure). The plugin exports these and its entry.
//
// Thread-safety: every function is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "accel/adapter/extension_status.h"
#include "accel/cuda/cuda.h"
#include "accel/cuda/export.h"
#include "accel/plugin_abi.h"

namespace accel::cuda::extension {

// ACCEL_OK, or a failure's status and message.
using Status = adapter::ExtensionStatus;

// What the driver probe found (it runs once per process; no context).
ACCEL_CUDA_API Status availability(Availability& out) noexcept;

// The CUDA stream behind `stream` (nullptr for the default stream).
// NotAvailable without devices; InvalidArgument for a bad device index or an
// id the backend never handed out.
ACCEL_CUDA_API Status nativeStream(accel_stream stream, CUstream_st*& out) noexcept;

// Names the live CUDA stream `stream` of `device` (accel/cuda/cuda.h,
// wrapExternalStream).
ACCEL_CUDA_API Status wrapExternalStream(CUstream_st* stream, std::int8_t device,
                                         accel_stream& out) noexcept;

// Runs `work(arg)` with device `device`'s primary context current on this
// thread (created if needed: the first work on the device), the previous
// context restored after. `work` must not throw.
ACCEL_CUDA_API Status onDevice(std::int8_t device, void (*work)(void*) noexcept,
                               void* arg) noexcept;

}  // namespace accel::cuda::extension
