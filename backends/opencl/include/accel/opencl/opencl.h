// The OpenCL backend's own API: registration, why it has (no) devices, each
// device's OpenCL properties, and the native handles behind its devices and
// streams, so that a framework enqueues its own kernels on accelhooks
// streams and allocates from accelhooks memory.
//
//   accel::Stream s = accel::getHooks(accel::opencl::deviceType()).getCurrentStream(0);
//   cl_command_queue q = accel::opencl::nativeQueue(s);     // in-order, profiling on
//   clEnqueueNDRangeKernel(q, my_kernel, ...);              // runs in stream order
//
// Device memory from the backend's allocator is coarse-grain SVM of the
// device's context: pass it with clSetKernelArgSVMPointer.
//
// The CL handle types are declared here, not included, so that this header
// needs no OpenCL headers; they are the very types of <CL/cl.h>.
//
// Thread-safety: every function is thread-safe. Handles returned stay valid
// for the process lifetime (the backend never releases its contexts or
// queues), except an external queue, which its owner keeps alive.
// Errors: functions taking a device or stream throw NotAvailable without
// devices (with the reason) and InvalidArgument for an index or stream that
// is not the backend's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/device.h"
#include "accel/device_type.h"
#include "accel/hooks.h"
#include "accel/opencl/device_info.h"
#include "accel/opencl/export.h"
#include "accel/stream.h"

struct _cl_platform_id;
struct _cl_device_id;
struct _cl_context;
struct _cl_command_queue;
struct _cl_program;

namespace accel::opencl {

inline constexpr const char* kDeviceTypeName = "opencl";

// The `opencl` device type, registered by name on first call. Never throws
// but bad_alloc.
ACCEL_OPENCL_API DeviceType deviceType();

// Registers the backend (once; later calls return the same hooks; hooks the
// plugin entry registered are adopted). Throws what registerHooks throws.
ACCEL_OPENCL_API AcceleratorHooks& registerBackend();

// Why the backend has the devices it has. Never throws but bad_alloc.
struct Availability {
  int device_count = 0;
  // Empty with devices; otherwise why there are none, e.g. "no OpenCL
  // loader: libOpenCL.so.1 not found (...)", "the OpenCL loader found no
  // platform ...", "no OpenCL 2.0 device with SVM ...", "excluded by
  // ACCEL_OPENCL_DEVICES ...".
  std::string reason;
  // Devices seen but not used, one line each with why ("0:0 pthread-...:
  // excluded by ACCEL_OPENCL_DEVICES=gpu").
  std::string skipped;
};
ACCEL_OPENCL_API Availability availability();

// What clGetDeviceInfo says about device `index` (accel/opencl/device_info.h).
// Throws NotAvailable / InvalidArgument as above.
ACCEL_OPENCL_API DeviceInfo deviceInfo(DeviceIndex index);

// The native handles. The context and queues are created on first use (the
// context of a device is its "primary context": hasPrimaryContext(i) is true
// once it exists).
ACCEL_OPENCL_API _cl_platform_id* nativePlatform(DeviceIndex index);
ACCEL_OPENCL_API _cl_device_id* nativeDevice(DeviceIndex index);
ACCEL_OPENCL_API _cl_context* nativeContext(DeviceIndex index);
// The in-order queue behind `stream` (the default stream, a pool stream, or
// a wrapped external queue).
ACCEL_OPENCL_API _cl_command_queue* nativeQueue(Stream stream);
// Where device memory of this backend lies in OpenCL's terms, for APIs that
// take cl_mem buffers and offsets instead of SVM pointers (CLBlast, clBLAS):
// the clSVMAlloc allocation that holds `ptr` (a segment of the caching
// allocator, shared with other blocks) and `ptr`'s byte offset in it. Wrap
// it as a buffer with
//   clCreateBuffer(nativeContext(a.device), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
//                  a.bytes, a.base, &status)
// which OpenCL (2.0 and later) defines for a pointer clSVMAlloc returned: the
// buffer's storage is that SVM memory itself, nothing is copied. Release the
// buffer before freeing the allocation that `ptr` points into.
// Throws InvalidArgument when `ptr` is not in a live allocation of the
// backend's device allocator (null, pinned host memory, freed or foreign
// memory; the message says which), NotAvailable without devices.
struct SvmAllocation {
  void* base = nullptr;    // what clSVMAlloc returned
  std::size_t bytes = 0;   // what it was asked for
  std::size_t offset = 0;  // ptr - base, in bytes
  DeviceIndex device = 0;  // the device (context) it belongs to
};
ACCEL_OPENCL_API SvmAllocation svmAllocation(const void* ptr);

// A Stream naming `queue`, an in-order queue of device `index`'s context
// created by the caller; wrapping the same queue twice gives the same id.
// The backend retains the queue (clRetainCommandQueue) for the process
// lifetime. Throws InvalidArgument for a null queue, an out-of-order queue,
// or a queue of another device or context.
ACCEL_OPENCL_API Stream wrapExternalQueue(_cl_command_queue* queue, DeviceIndex index);

// Builds OpenCL C `source` for device `index` with `options` (added to the
// backend's own: none). Programs are cached per device by (source,
// options): a second call returns the same program. Throws DeviceError
// whose message holds the compiler's build log when the build fails.
// The program belongs to the backend; do not release it.
ACCEL_OPENCL_API _cl_program* buildProgram(DeviceIndex index, std::string_view source,
                                           std::string_view options = {});

}  // namespace accel::opencl

namespace accel::opencl {

// Copies `bytes` from `src` to `dst`, either of which may be device memory
// of this backend (SVM) or host memory, and returns when the copy is done
// (clEnqueueSVMMemcpy, blocking, on the default queue of the device that
// owns the device side; device 0 when neither side is device memory).
// Work queued earlier on that queue runs first; other queues are not
// waited for. Throws InvalidArgument for null pointers with bytes > 0,
// NotAvailable without devices, DeviceError from OpenCL.
ACCEL_OPENCL_API void copyBlocking(void* dst, const void* src, std::size_t bytes);

}  // namespace accel::opencl
