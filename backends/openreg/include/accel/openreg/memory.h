// Device memory of openreg: allocating it and copying to, from and between it.
//
// Device memory lives in an address range that the host cannot touch: every
// page of it is PROT_NONE except while a copy or kernel that names it runs, so
// a host dereference of a device pointer crashes with SIGSEGV, as it would on
// a discrete accelerator. Move data with copy()/copyAsync(), or touch it in a
// kernel (kernel.h).
//
//   accel::DataPtr buffer = accel::openreg::allocate(4096, 0);  // on openreg:0
//   accel::openreg::copy(buffer.get(), host.data(), 4096);       // host -> device
//
// Copies infer their direction from the pointers (as cudaMemcpyDefault does):
// host -> device, device -> host, device -> device (also across devices).
// Each device side must lie inside one live allocation: an out-of-bounds or
// use-after-free copy is an InvalidArgument at the call, not a silent
// corruption. Host memory may be pageable or pinned (getPinnedMemoryAllocator).
//
// Thread-safety: all functions are thread-safe.
#pragma once

#include <cstddef>

#include "accel/allocator.h"
#include "accel/device.h"
#include "accel/openreg/export.h"
#include "accel/stream.h"

namespace accel::openreg {

// Allocates `bytes` on openreg device `device` (-1: the current device):
// the same as getHooks(deviceType()).getDeviceAllocator(device).allocate(bytes).
// Allocations are page-granular. Throws InvalidArgument for a bad index,
// OutOfMemory when the device is full (or fault injection says so),
// DeviceError when the device is lost.
[[nodiscard]] ACCEL_OPENREG_API DataPtr allocate(std::size_t bytes,
                                                 DeviceIndex device = kCurrentDevice);

// Copies `bytes` from `src` to `dst` and waits until the copy is done. It runs
// on the calling thread's current stream of the device involved (the
// destination's for host -> device, the source's otherwise), after the work
// already enqueued there. Throws InvalidArgument when neither pointer is
// openreg memory or a device range is not inside one live allocation;
// DeviceError when the device is lost, the stream is capturing a graph, or
// earlier work on that stream failed (the error is reported once).
ACCEL_OPENREG_API void copy(void* dst, const void* src, std::size_t bytes);

// Enqueues the copy on `stream` and returns at once; the copy runs after the
// work enqueued on `stream` before it. The stream must be on a device the copy
// involves. Host memory must stay valid, and unchanged for host -> device,
// until the copy is done (synchronise the stream or an event recorded after
// it). While the stream captures a graph the copy is recorded, not run.
// Throws like copy(), except that capturing streams are fine.
ACCEL_OPENREG_API void copyAsync(void* dst, const void* src, std::size_t bytes,
                                 Stream stream);

// True if `ptr` lies in openreg's device address range (allocated or not).
// Never throws; false before the backend is initialised.
[[nodiscard]] ACCEL_OPENREG_API bool isDevicePointer(const void* ptr) noexcept;

}  // namespace accel::openreg
