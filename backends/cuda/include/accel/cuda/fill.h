// Random fills of CUDA device memory, bit-identical to the host fills of
// accel/random_fill.h for the same (seed, offset).
//
// A fill claims its part of the generator's stream when it is enqueued (the
// offset advances at once, in program order), then a kernel writes
// data[0, count) on `stream`. The kernel computes every element with the
// very functions the host fills use (accel/random_fill_elements.h), so
//
//   accel::cuda::fillUniform(stream, device_ptr, n);            // GPU
//   accel::fillUniform(std::span(host, n), generator);           // host
//
// give the same numbers when the two generators stand at the same position.
// Inside a captured graph the position is fixed at capture: every replay
// writes the same numbers.
//
// Every function: `generator` defaults to the default generator of the
// stream's device. Throws InvalidArgument for parameters the host fill
// rejects (nothing is consumed then) or a stream of another device type;
// NotAvailable without devices; DeviceError when the launch fails.
// Thread-safety: thread-safe; fills from one generator on several threads get
// disjoint parts of its stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/cuda/export.h"
#include "accel/generator.h"
#include "accel/stream.h"

namespace accel::cuda {

// Raw 32-/64-bit outputs.
ACCEL_CUDA_API void fillBits(Stream stream, std::uint32_t* data, std::size_t count,
                             Generator generator = {});
ACCEL_CUDA_API void fillBits(Stream stream, std::uint64_t* data, std::size_t count,
                             Generator generator = {});

// Uniform in [low, high) ([0, 1) maps exactly as the host's unranged fill).
ACCEL_CUDA_API void fillUniform(Stream stream, float* data, std::size_t count,
                                float low = 0.0f, float high = 1.0f,
                                Generator generator = {});
ACCEL_CUDA_API void fillUniform(Stream stream, double* data, std::size_t count,
                                double low = 0.0, double high = 1.0,
                                Generator generator = {});

// Normal(mean, stddev); normal fills draw whole pairs.
ACCEL_CUDA_API void fillNormal(Stream stream, float* data, std::size_t count,
                               float mean = 0.0f, float stddev = 1.0f,
                               Generator generator = {});
ACCEL_CUDA_API void fillNormal(Stream stream, double* data, std::size_t count,
                               double mean = 0.0, double stddev = 1.0,
                               Generator generator = {});

// 1 with probability p, else 0.
ACCEL_CUDA_API void fillBernoulli(Stream stream, std::uint8_t* data, std::size_t count,
                                  double p, Generator generator = {});
ACCEL_CUDA_API void fillBernoulli(Stream stream, float* data, std::size_t count, double p,
                                  Generator generator = {});

}  // namespace accel::cuda
