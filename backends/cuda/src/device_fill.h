// The CUDA device fill: the fill group's function (CudaBackend::fill, behind
// the core's accel::fillUniform etc. of accel/device_fill.h).
//
// Thread-safety: thread-safe; fills from one generator on several threads get
// disjoint parts of its stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/adapter/core.h"

namespace accel::cuda::detail {

// Enqueues on `stream` a fill of `count` elements of `kind` (ACCEL_FILL_*;
// a, b: low and high of a uniform fill, mean and stddev of a normal one, p
// of a Bernoulli fill) into device memory `data`, drawn from `generator`,
// bit-identical to the core's host fill from the same position. The core
// has checked the stream's device, the kind, a and b, the range and the
// generator (AcceleratorHooks::fillRandom). Outside a capture the
// generator's range is reserved from `core` at once; captured, each replay
// reserves it (docs/cuda.md, "Fills"). Throws InvalidArgument for a stream
// id the backend never handed out or (captured) a graph's draw that would
// pass 2^64 - 1; DeviceError when the launch fails; for a captured fill,
// OutOfMemory when its slot finds no room.
void fill(const adapter::Core& core, adapter::Stream stream, std::int32_t kind,
          void* data, std::size_t count, double a, double b, accel_generator* generator);

}  // namespace accel::cuda::detail
