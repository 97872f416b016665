// Random fills of OpenCL device memory (SVM from the backend's allocator),
// bit-identical to the host fills of accel/random_fill.h for the same (seed,
// offset).
//
// Outside a graph capture, a fill claims its part of the generator's stream
// when it is enqueued (the offset advances at once, in program order), then a
// kernel (src/fill*.cl, the host fill's per-element code in OpenCL C) writes
// data[0, count) on `stream`. So
//
//   accel::opencl::fillUniform(stream, svm_ptr, n);        // device
//   accel::fillUniform(std::span(host, n), generator);      // host
//
// give the same numbers when the two generators stand at the same position.
// On a stream being captured into a graph, a fill claims nothing and the
// generator does not move: the kernel is recorded reading its position from
// the graph's slot for that generator (device memory from the capture's
// pool, allocated at the generator's first captured fill) plus its offset
// inside the graph. Each replay claims the graph's whole draw from the
// generator, in program order with the uncaptured fills, so that every
// replay writes new numbers: those the fills would write, run at that point.
// The first fill on a device builds the kernels (pocl: seconds with a cold
// kernel cache, see docs/opencl.md); each thread then keeps its own
// cl_kernel objects (a DeviceThreadHandlePool), since a kernel's arguments
// must not be set from two threads at once.
//
// Every function: `generator` defaults to the default generator of the
// stream's device. Throws InvalidArgument for parameters the host fill
// rejects (nothing is consumed then), a stream of another device type, or
// (captured) a graph's draw from the generator that would pass 2^64 - 1;
// NotAvailable without devices; NotSupported for a double fill on a device
// without cl_khr_fp64; DeviceError when the build, the launch or the
// recording fails; for the first captured fill of a generator, what the
// device allocator throws for the slot (OutOfMemory).
// Thread-safety: thread-safe; fills from one generator on several threads get
// disjoint parts of its stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/generator.h"
#include "accel/opencl/export.h"
#include "accel/stream.h"

namespace accel::opencl {

// Raw 32-/64-bit outputs.
ACCEL_OPENCL_API void fillBits(Stream stream, std::uint32_t* data, std::size_t count,
                               Generator generator = {});
ACCEL_OPENCL_API void fillBits(Stream stream, std::uint64_t* data, std::size_t count,
                               Generator generator = {});

// Uniform in [low, high) ([0, 1) maps exactly as the host's unranged fill).
ACCEL_OPENCL_API void fillUniform(Stream stream, float* data, std::size_t count,
                                  float low = 0.0f, float high = 1.0f,
                                  Generator generator = {});
ACCEL_OPENCL_API void fillUniform(Stream stream, double* data, std::size_t count,
                                  double low = 0.0, double high = 1.0,
                                  Generator generator = {});

// Normal(mean, stddev); normal fills draw whole pairs.
ACCEL_OPENCL_API void fillNormal(Stream stream, float* data, std::size_t count,
                                 float mean = 0.0f, float stddev = 1.0f,
                                 Generator generator = {});
ACCEL_OPENCL_API void fillNormal(Stream stream, double* data, std::size_t count,
                                 double mean = 0.0, double stddev = 1.0,
                                 Generator generator = {});

// 1 with probability p, else 0.
ACCEL_OPENCL_API void fillBernoulli(Stream stream, std::uint8_t* data, std::size_t count,
                                    double p, Generator generator = {});
ACCEL_OPENCL_API void fillBernoulli(Stream stream, float* data, std::size_t count,
                                    double p, Generator generator = {});

}  // namespace accel::opencl
