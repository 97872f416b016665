// The OpenCL headers as the backend includes them: the API version it is
// written against (3.0; it calls only 2.0 entry points, and checks each
// device's version before use) stated once, before any CL header.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>
