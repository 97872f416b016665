// The ICD configuration the OpenCL loader will read, checked before it does.
//
// The ICD loader (ocl-icd, Khronos') reads every *.icd file of its vendors
// directory (/etc/OpenCL/vendors, or OCL_ICD_VENDORS) and dlopens the driver
// library each names, plus those OCL_ICD_FILENAMES lists. A FIFO among those
// files blocks the first OpenCL call for good; a truncated driver library
// kills the process with SIGBUS inside dlopen. Neither may take down a
// program that only asked whether OpenCL is there, so the backend checks,
// with the core's rules (accel/kit/library_file.h), what the loader will
// open, and reports the first problem as the reason there are no devices.
// Driver names without a '/' are found by dlopen's search and not checked.
//
// Thread-safety: thread-safe (reads the environment and files only).
#pragma once

#include <string>

namespace accel::opencl::detail {

// The first problem found, in words naming the file, or empty. Never throws
// except std::bad_alloc.
std::string icdConfigurationProblem();

}  // namespace accel::opencl::detail
