#pragma once

// Symbols of libaccel_opencl.so that programs linking it may call.
#define ACCEL_OPENCL_API __attribute__((visibility("default")))
