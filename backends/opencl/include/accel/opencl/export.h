// Symbol visibility for libaccel_opencl.so.
//
// The plugin is built with -fvisibility=hidden; ACCEL_OPENCL_API marks what
// it exports beside its entries: the extension interface (src/extension.h)
// that the OpenCL C++ API (the static library accel_opencl) calls. The API's
// own functions carry it too, for programs that build it into a shared
// library of theirs.
#pragma once

#define ACCEL_OPENCL_API __attribute__((visibility("default")))
