// Device-side random fills: uniform and normal values written by an openreg
// kernel, bit-identical to the host fills of accel/random_fill.h.
//
// Outside a graph capture, a fill claims its part of the generator's stream
// when it is enqueued (reservePhilox: the offset advances at once, in program
// order, however late the kernel runs), then the kernel runs the host fill
// for that very (seed, offset) on the device buffer. So
//
//   accel::openreg::fillUniform(stream, device_ptr, n);          // openreg
//   accel::fillUniform(std::span(host, n), 0.0f, 1.0f, generator); // host
//
// write the same numbers when the two generators stand at the same
// (seed, offset). Captured into a graph, a fill claims nothing and the
// generator does not move: it reads its position from the graph's slot for
// that generator (device memory from the capture's pool, allocated at the
// generator's first captured fill) plus its offset inside the graph, and
// each replay claims the graph's whole draw, in program order, so that every
// replay writes new numbers. A captured fill also throws InvalidArgument when
// the graph's draw would pass 2^64 - 1 and, for a generator's first one, what
// the device allocator throws for the slot (OutOfMemory).
//
// Thread-safety: thread-safe; fills from one generator on several threads get
// disjoint parts of its stream.
#pragma once

#include <cstddef>

#include "accel/generator.h"
#include "accel/openreg/export.h"
#include "accel/stream.h"

namespace accel::openreg {

// Enqueues a fill of data[0, count) on `stream` with uniform values in
// [low, high). `generator` defaults to the default generator of the stream's
// device. Throws InvalidArgument for parameters the host fill rejects, a
// range not inside one live allocation of the stream's device, or an
// undefined/exhausted generator (nothing is consumed then); DeviceError when
// the device is lost.
ACCEL_OPENREG_API void fillUniform(Stream stream, float* data, std::size_t count,
                                   float low = 0.0f, float high = 1.0f,
                                   Generator generator = {});
ACCEL_OPENREG_API void fillUniform(Stream stream, double* data, std::size_t count,
                                   double low = 0.0, double high = 1.0,
                                   Generator generator = {});

// Same, with normal values of the given mean and standard deviation (normal
// fills draw whole pairs: an odd count consumes one output pair more).
ACCEL_OPENREG_API void fillNormal(Stream stream, float* data, std::size_t count,
                                  float mean = 0.0f, float stddev = 1.0f,
                                  Generator generator = {});
ACCEL_OPENREG_API void fillNormal(Stream stream, double* data, std::size_t count,
                                  double mean = 0.0, double stddev = 1.0,
                                  Generator generator = {});

}  // namespace accel::openreg
