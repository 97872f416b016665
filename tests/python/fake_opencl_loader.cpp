// A fake OpenCL loader for ACCEL_OPENCL_LIBRARY: a well-formed library that
// exports every entry point the OpenCL backend resolves, whose
// clGetPlatformIDs does what a broken driver does while listing platforms,
// chosen by ACCEL_TEST_FAKE_OPENCL_DISCOVERY: "crash" raises SIGSEGV, anything
// else blocks for good (reads a pipe nobody writes). The other entry points
// are never reached; they answer CL_INVALID_VALUE (-30).
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

// The project builds with hidden visibility; a loader exports its entry points.
#define ACCEL_FAKE_OPENCL_EXPORT __attribute__((visibility("default")))

extern "C" {

ACCEL_FAKE_OPENCL_EXPORT int clGetPlatformIDs(unsigned, void*, unsigned*) {
  const char* mode = std::getenv("ACCEL_TEST_FAKE_OPENCL_DISCOVERY");
  if (mode != nullptr && std::strcmp(mode, "crash") == 0) std::raise(SIGSEGV);
  int never_written[2];
  if (::pipe(never_written) != 0) std::abort();
  char byte;
  while (::read(never_written[0], &byte, 1) != 0) {
  }
  return -30;
}

#define ACCEL_FAKE_OPENCL_ENTRY(name) \
  ACCEL_FAKE_OPENCL_EXPORT int name() { return -30; }
ACCEL_FAKE_OPENCL_ENTRY(clGetPlatformInfo)
ACCEL_FAKE_OPENCL_ENTRY(clGetDeviceIDs)
ACCEL_FAKE_OPENCL_ENTRY(clGetDeviceInfo)
ACCEL_FAKE_OPENCL_ENTRY(clCreateContext)
ACCEL_FAKE_OPENCL_ENTRY(clReleaseContext)
ACCEL_FAKE_OPENCL_ENTRY(clCreateCommandQueueWithProperties)
ACCEL_FAKE_OPENCL_ENTRY(clRetainCommandQueue)
ACCEL_FAKE_OPENCL_ENTRY(clReleaseCommandQueue)
ACCEL_FAKE_OPENCL_ENTRY(clGetCommandQueueInfo)
ACCEL_FAKE_OPENCL_ENTRY(clFlush)
ACCEL_FAKE_OPENCL_ENTRY(clFinish)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueMarkerWithWaitList)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueBarrierWithWaitList)
ACCEL_FAKE_OPENCL_ENTRY(clWaitForEvents)
ACCEL_FAKE_OPENCL_ENTRY(clGetEventInfo)
ACCEL_FAKE_OPENCL_ENTRY(clGetEventProfilingInfo)
ACCEL_FAKE_OPENCL_ENTRY(clRetainEvent)
ACCEL_FAKE_OPENCL_ENTRY(clReleaseEvent)
ACCEL_FAKE_OPENCL_ENTRY(clSVMAlloc)
ACCEL_FAKE_OPENCL_ENTRY(clSVMFree)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueSVMMemcpy)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueSVMMemFill)
ACCEL_FAKE_OPENCL_ENTRY(clCreateBuffer)
ACCEL_FAKE_OPENCL_ENTRY(clReleaseMemObject)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueMapBuffer)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueUnmapMemObject)
ACCEL_FAKE_OPENCL_ENTRY(clCreateProgramWithSource)
ACCEL_FAKE_OPENCL_ENTRY(clBuildProgram)
ACCEL_FAKE_OPENCL_ENTRY(clGetProgramBuildInfo)
ACCEL_FAKE_OPENCL_ENTRY(clReleaseProgram)
ACCEL_FAKE_OPENCL_ENTRY(clCreateKernel)
ACCEL_FAKE_OPENCL_ENTRY(clReleaseKernel)
ACCEL_FAKE_OPENCL_ENTRY(clSetKernelArg)
ACCEL_FAKE_OPENCL_ENTRY(clSetKernelArgSVMPointer)
ACCEL_FAKE_OPENCL_ENTRY(clGetKernelWorkGroupInfo)
ACCEL_FAKE_OPENCL_ENTRY(clEnqueueNDRangeKernel)
ACCEL_FAKE_OPENCL_ENTRY(clCloneKernel)
ACCEL_FAKE_OPENCL_ENTRY(clGetExtensionFunctionAddressForPlatform)
#undef ACCEL_FAKE_OPENCL_ENTRY
#undef ACCEL_FAKE_OPENCL_EXPORT
}
