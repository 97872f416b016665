// ACCEL_HOST_DEVICE: marks a function that is compiled both for the host and,
// when the file is compiled by nvcc, for a CUDA device.
//
// Use it on code that must give the same results on both sides (the Philox
// engine and the random fill mappings): one definition, two compilers. With
// a host compiler it expands to nothing.
//
// Thread-safety and lifetime: a macro; nothing to say.
#pragma once

#if defined(__CUDACC__)
#define ACCEL_HOST_DEVICE __host__ __device__
#else
#define ACCEL_HOST_DEVICE
#endif
