// Random fills of device memory, for every backend that declares the fill
// group: one API, bit for bit what the host fills of accel/random_fill.h
// write for the same (seed, offset).
//
//   accel::DataPtr block = hooks.getDeviceAllocator()->allocate(n * sizeof(float));
//   accel::fillUniform(stream, static_cast<float*>(block.get()), n);  // device
//   accel::fillUniform(std::span(host, n), generator);                  // host
//
// give the same numbers when the two generators stand at the same position.
// Each function calls the hooks of the stream's device type
// (AcceleratorHooks::fillRandom), which check the call and hand it to the
// backend; the backend enqueues the fill on `stream`.
//
// Outside a graph capture, a fill claims its part of the generator's stream
// when it is enqueued (the generator moves at once, in program order), so
// fills from one generator get disjoint parts of its stream. On a stream
// being captured into a graph, the fill claims nothing and the generator
// does not move; each replay claims the graph's draw anew, so that every
// replay writes new numbers (where the backend records fills in graphs).
//
// Every function: `generator` defaults to the default generator of the
// stream's device, and must otherwise be one of the stream's device type.
// Throws InvalidArgument for parameters the host fill rejects (nothing is
// consumed then), a host (cpu) stream, a stream of a device the backend
// does not have, a null
// `data` with count > 0, or a range [data, data + count) that is not inside
// one live allocation of the stream's device; NotSupported naming the backend
// and AcceleratorHooks::fillRandom when the backend does not declare the fill
// group (or, for double fills, its device cannot do doubles); what the
// backend throws (DeviceError, OutOfMemory for a captured fill's bookkeeping).
// A count of 0 checks the stream and the parameters and writes nothing.
// Thread-safety: thread-safe; concurrent fills must write disjoint memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accel/export.h"
#include "accel/generator.h"
#include "accel/philox.h"
#include "accel/stream.h"

namespace accel {

// What a device fill writes: the element type and the distribution. The
// values are the plugin ABI's ACCEL_FILL_* kinds (accel/plugin_abi.h).
// A new value goes last and is named in src/core/random/device_fill.cpp's table.
enum class DeviceFill : std::int32_t {
  Bits32 = 0,          // uint32_t, every bit random
  Bits64 = 1,          // uint64_t
  UniformFloat = 2,    // float in [a, b)
  UniformDouble = 3,   // double in [a, b)
  NormalFloat = 4,     // float, mean a, standard deviation b
  NormalDouble = 5,    // double
  BernoulliU8 = 6,     // uint8_t, 1 with probability a
  BernoulliFloat = 7,  // float 0 or 1, 1 with probability a
};

// "fillBits", "fillUniform", "fillNormal", "fillBernoulli": the public
// function a kind is written with, for messages. Never throws.
[[nodiscard]] ACCEL_API std::string_view deviceFillApiName(DeviceFill kind) noexcept;

// The bytes of one element of `kind`. Never throws.
[[nodiscard]] ACCEL_API std::size_t deviceFillElementBytes(DeviceFill kind) noexcept;

// The Philox outputs a fill of `count` elements of `kind` consumes (what the
// generator moves by); 0 for a value that is no kind. Never throws.
[[nodiscard]] ACCEL_API std::uint64_t deviceFillOutputs(DeviceFill kind,
                                                        std::uint64_t count) noexcept;

// The host reference of a device fill: writes `count` elements of `kind` to
// host memory `data` from position `from`, bit for bit what a device fill
// from that position writes. Throws InvalidArgument for a value that is no
// kind and for a and b as the fill checks them (count 0 checks only).
// Thread-safe; concurrent fills must write disjoint memory.
ACCEL_API void fillHostReference(DeviceFill kind, void* data, std::size_t count, double a,
                                 double b, PhiloxPosition from);

// Raw 32-/64-bit outputs.
ACCEL_API void fillBits(Stream stream, std::uint32_t* data, std::size_t count,
                        Generator generator = {});
ACCEL_API void fillBits(Stream stream, std::uint64_t* data, std::size_t count,
                        Generator generator = {});

// Uniform in [low, high) ([0, 1) maps exactly as the host's unranged fill).
ACCEL_API void fillUniform(Stream stream, float* data, std::size_t count,
                           float low = 0.0f, float high = 1.0f, Generator generator = {});
ACCEL_API void fillUniform(Stream stream, double* data, std::size_t count,
                           double low = 0.0, double high = 1.0, Generator generator = {});

// Normal(mean, stddev); normal fills draw whole pairs.
ACCEL_API void fillNormal(Stream stream, float* data, std::size_t count,
                          float mean = 0.0f, float stddev = 1.0f,
                          Generator generator = {});
ACCEL_API void fillNormal(Stream stream, double* data, std::size_t count,
                          double mean = 0.0, double stddev = 1.0,
                          Generator generator = {});

// 1 with probability p, else 0.
ACCEL_API void fillBernoulli(Stream stream, std::uint8_t* data, std::size_t count,
                             double p, Generator generator = {});
ACCEL_API void fillBernoulli(Stream stream, float* data, std::size_t count, double p,
                             Generator generator = {});

}  // namespace accel
