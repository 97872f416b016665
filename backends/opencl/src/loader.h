// Loader: the OpenCL ICD loader (libOpenCL.so.1), opened lazily with dlopen.
//
// The plugin never links libOpenCL: a machine without an OpenCL runtime must
// still load libaccel_opencl.so, answer every probe and say why it has no
// devices. The first use opens the library and resolves the entry points the
// backend calls (ACCEL_OPENCL_FUNCTIONS below); a missing library or entry
// point is kept as the reason. The outcome never changes after the first use.
//
// The library is looked up as libOpenCL.so.1 (the ICD loader's soname), or
// at the path ACCEL_OPENCL_LIBRARY names (tests point it at a file that does
// not exist to see the "no loader" path).
//
// Thread-safety: loader() is thread-safe (the library is opened once); the
// function pointers are immutable after it.
// Lifetime: never destroyed; the library is never closed (queues and SVM
// memory may be released during static destruction).
#pragma once

#include <string>

#include "cl_api.h"

namespace accel::opencl::detail {

// X(name): every OpenCL function the backend calls, resolved together.
#define ACCEL_OPENCL_FUNCTIONS(X)       \
  X(clGetPlatformIDs)                   \
  X(clGetPlatformInfo)                  \
  X(clGetDeviceIDs)                     \
  X(clGetDeviceInfo)                    \
  X(clCreateContext)                    \
  X(clReleaseContext)                   \
  X(clCreateCommandQueueWithProperties) \
  X(clRetainCommandQueue)               \
  X(clReleaseCommandQueue)              \
  X(clGetCommandQueueInfo)              \
  X(clFlush)                            \
  X(clFinish)                           \
  X(clEnqueueMarkerWithWaitList)        \
  X(clEnqueueBarrierWithWaitList)       \
  X(clWaitForEvents)                    \
  X(clGetEventInfo)                     \
  X(clGetEventProfilingInfo)            \
  X(clRetainEvent)                      \
  X(clReleaseEvent)                     \
  X(clSVMAlloc)                         \
  X(clSVMFree)                          \
  X(clEnqueueSVMMemcpy)                 \
  X(clEnqueueSVMMemFill)                \
  X(clCreateBuffer)                     \
  X(clReleaseMemObject)                 \
  X(clEnqueueMapBuffer)                 \
  X(clEnqueueUnmapMemObject)            \
  X(clCreateProgramWithSource)          \
  X(clBuildProgram)                     \
  X(clGetProgramBuildInfo)              \
  X(clReleaseProgram)                   \
  X(clCreateKernel)                     \
  X(clReleaseKernel)                    \
  X(clSetKernelArg)                     \
  X(clSetKernelArgSVMPointer)           \
  X(clGetKernelWorkGroupInfo)           \
  X(clEnqueueNDRangeKernel)             \
  X(clCloneKernel)                      \
  X(clGetExtensionFunctionAddressForPlatform)

struct Loader {
  // True when the library opened and every entry point resolved.
  bool loaded = false;
  // Why not, in words ("no OpenCL loader: libOpenCL.so.1 not found (...)");
  // empty when loaded.
  std::string reason;
  // The library name or path that was opened (or tried).
  std::string library;

#define ACCEL_OPENCL_POINTER(name) decltype(&::name) name = nullptr;
  ACCEL_OPENCL_FUNCTIONS(ACCEL_OPENCL_POINTER)
#undef ACCEL_OPENCL_POINTER
};

// The loader, opened on first use. Never throws.
const Loader& loader() noexcept;

// "CL_OUT_OF_RESOURCES (-5)". Never throws but bad_alloc.
std::string errorName(cl_int status);

}  // namespace accel::opencl::detail
