// The CUDA device fill behind extension::fill (extension.h): one function of
// the shape of the plugin API's fill (a kind, its two parameters, a
// generator's C handle), whatever public call it serves.
//
// Thread-safety: thread-safe; fills from one generator on several threads get
// disjoint parts of its stream.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/plugin_abi.h"

namespace accel::cuda::detail {

// Enqueues the fill (extension.h, fill). Throws InvalidArgument for
// parameters the host fill rejects (nothing is consumed then), an unknown
// kind, a bad device index or stream id, or (captured) a graph's draw that
// would pass 2^64 - 1; NotAvailable without devices; DeviceError when the
// launch fails; for the first captured fill of a generator, what the device
// allocator throws for its slot (OutOfMemory).
void fill(std::string_view api, accel_stream stream, std::int32_t kind, void* data,
          std::uint64_t count, double a, double b, accel_generator* generator);

}  // namespace accel::cuda::detail
