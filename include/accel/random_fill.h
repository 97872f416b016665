// Host random fills from the Philox4x32-10 stream, and the exact mappings from
// its 32-bit outputs to values.
//
// A fill writes element i from the outputs at fixed positions after its
// starting PhiloxPosition (below), so the result depends only on (seed,
// offset) and the parameters: never on the code path (scalar, AVX2, AVX-512),
// the number of threads or the alignment of the output. Backends use the same
// mappings (the *FromBits functions) in their kernels, so a device produces the
// very numbers a host fill does. docs/random.md has the whole story.
//
// Consumption (32-bit outputs per element, from `from.offset` on):
//   fillBits (uint32)              1     element i = output i
//   fillBits (uint64)              2     element i = out[2i] | out[2i+1] << 32
//   fillUniform (float)            1     uniformFloatFromBits(out[i])
//   fillUniform (double)           2     uniformDoubleFromBits(out[2i], out[2i+1])
//   fillNormal (float)             1     elements 2p, 2p+1 from out[2p], out[2p+1]
//   fillNormal (double)            2     elements 2p, 2p+1 from out[4p .. 4p+3]
//   fillBernoulli (uint8, float)   1     out[i] < bernoulliThreshold(p)
// Normal fills draw whole pairs: an odd count consumes one element more.
// fillOutputs() returns the count for a fill; the Generator overloads reserve
// exactly that many.
//
// Mappings use only correctly rounded IEEE-754 operations (+, -, *, /, sqrt)
// on integers converted exactly, and no fused multiply-add, so that they give
// the same bits on every conforming machine (the normal mapping carries its
// own log and sin/cos polynomials for that reason). Code that reimplements
// them must not let its compiler contract a*b+c (-ffp-contract=off; in CUDA
// __fmul_rn/__fadd_rn).
//
// Thread-safety: every function is thread-safe; concurrent fills must write to
// disjoint outputs. The Generator overloads reserve from the generator
// atomically (see PhiloxGenerator::reserve), so concurrent fills from one
// generator get disjoint parts of its stream.
// Errors: parameter checks throw InvalidArgument before anything is written;
// forcing a path the CPU lacks throws NotSupported.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "accel/adapter/fill_jobs.h"
#include "accel/export.h"
#include "accel/generator.h"
#include "accel/philox.h"

namespace accel {

// ---------------------------------------------------------------------------
// Mappings from 32-bit outputs to values.

// floor(bits / 2^8) / 2^24: a multiple of 2^-24 in [0, 1). Never throws.
[[nodiscard]] constexpr float uniformFloatFromBits(std::uint32_t bits) noexcept {
  return static_cast<float>(bits >> 8) * 0x1p-24f;
}

// floor(w / 2^11) / 2^53 with w = first | second << 32: a multiple of 2^-53
// in [0, 1). Never throws.
[[nodiscard]] constexpr double uniformDoubleFromBits(std::uint32_t first,
                                                     std::uint32_t second) noexcept {
  const std::uint64_t word = (static_cast<std::uint64_t>(second) << 32) | first;
  return static_cast<double>(word >> 11) * 0x1p-53;
}

// min(u * (to - from) + from, the largest value below `to`), with u from the
// [0, 1) mapping above, each operation rounded separately. Parameters as for
// fillUniform (not checked here). Never throws.
[[nodiscard]] ACCEL_API float uniformFloatFromBits(std::uint32_t bits, float from,
                                                   float to) noexcept;
[[nodiscard]] ACCEL_API double uniformDoubleFromBits(std::uint32_t first,
                                                     std::uint32_t second, double from,
                                                     double to) noexcept;

// Box-Muller: two standard normal values from two outputs (float) or four
// (double). With u1 = (floor(first / 2^8) + 1) / 2^24 in (0, 1] and the turn
// t = floor(second / 2^8) / 2^24 (double: 53-bit versions from first|second
// and third|fourth), returns {r cos(2 pi t), r sin(2 pi t)}, r = sqrt(-2 log u1),
// where log, cos and sin are accelhooks' own fixed polynomials (docs/random.md).
// fillNormal writes z * stddev + mean. Never throws.
[[nodiscard]] ACCEL_API std::array<float, 2> normalFloatPairFromBits(
    std::uint32_t first, std::uint32_t second) noexcept;
[[nodiscard]] ACCEL_API std::array<double, 2> normalDoublePairFromBits(
    std::uint32_t first, std::uint32_t second, std::uint32_t third,
    std::uint32_t fourth) noexcept;

// floor(p * 2^32), in [0, 2^32]; an output x gives true iff x < threshold, so
// P(true) = threshold / 2^32, within 2^-32 of p. p must be in [0, 1]
// (not checked here). Never throws.
[[nodiscard]] constexpr std::uint64_t bernoulliThreshold(double p) noexcept {
  return adapter::bernoulliThreshold(p);  // the plugins' kernels use the same
}
[[nodiscard]] constexpr bool bernoulliFromBits(std::uint32_t bits,
                                               std::uint64_t threshold) noexcept {
  return bits < threshold;
}

// ---------------------------------------------------------------------------
// How a fill runs.

// The code path of a fill. Auto picks the widest the CPU supports (AVX-512F,
// then AVX2, then scalar); the others force one, for tests and benchmarks.
// A new value goes last and is named in src/core/random/random_fill.cpp's table.
enum class FillPath : std::uint8_t { Auto, Scalar, Avx2, Avx512 };

// True if `path` can run on this CPU (Auto and Scalar always). Never throws.
[[nodiscard]] ACCEL_API bool isFillPathSupported(FillPath path) noexcept;
// The path Auto resolves to on this CPU; any other path is returned as is.
// Never throws.
[[nodiscard]] ACCEL_API FillPath resolveFillPath(FillPath path) noexcept;
// "auto", "scalar", "avx2", "avx512". Never throws.
[[nodiscard]] ACCEL_API std::string_view fillPathName(FillPath path) noexcept;

struct FillOptions {
  FillPath path = FillPath::Auto;
  // Threads to split the fill over, including the caller; 0 means
  // std::thread::hardware_concurrency(). Fewer are used for small fills
  // (about 16 Ki elements at least per thread). Any split gives the same values.
  unsigned threads = 1;
};

// What a fill produces; fillOutputs() says how much of the stream it consumes.
enum class FillKind : std::uint8_t {
  Uint32,
  Uint64,
  UniformFloat,
  UniformDouble,
  NormalFloat,
  NormalDouble,
  Bernoulli,
};

// 32-bit outputs consumed by a fill of `count` elements of `kind` (table at
// the top). Never throws.
[[nodiscard]] constexpr std::uint64_t fillOutputs(FillKind kind,
                                                  std::uint64_t count) noexcept {
  switch (kind) {
    case FillKind::Uint64:
    case FillKind::UniformDouble:
      return 2 * count;
    case FillKind::NormalFloat:
      return count + (count & 1);
    case FillKind::NormalDouble:
      return 2 * (count + (count & 1));
    default:
      return count;
  }
}

// ---------------------------------------------------------------------------
// Fills. Each exists in two forms: from an explicit PhiloxPosition, or from a
// Generator, which reserves fillOutputs(kind, out.size()) outputs from it
// first. A position-based fill throws InvalidArgument when offset + the
// outputs it consumes would exceed 2^64 - 1 (positions never wrap around).

// Raw outputs.
ACCEL_API void fillBits(std::span<std::uint32_t> out, PhiloxPosition from,
                        FillOptions options = {});
ACCEL_API void fillBits(std::span<std::uint32_t> out, const Generator& generator,
                        FillOptions options = {});
ACCEL_API void fillBits(std::span<std::uint64_t> out, PhiloxPosition from,
                        FillOptions options = {});
ACCEL_API void fillBits(std::span<std::uint64_t> out, const Generator& generator,
                        FillOptions options = {});

// Uniform in [0, 1).
ACCEL_API void fillUniform(std::span<float> out, PhiloxPosition from,
                           FillOptions options = {});
ACCEL_API void fillUniform(std::span<float> out, const Generator& generator,
                           FillOptions options = {});
ACCEL_API void fillUniform(std::span<double> out, PhiloxPosition from,
                           FillOptions options = {});
ACCEL_API void fillUniform(std::span<double> out, const Generator& generator,
                           FillOptions options = {});

// Uniform in [low, high). Throws InvalidArgument unless low < high and both
// and high - low are finite.
ACCEL_API void fillUniform(std::span<float> out, float low, float high,
                           PhiloxPosition from, FillOptions options = {});
ACCEL_API void fillUniform(std::span<float> out, float low, float high,
                           const Generator& generator, FillOptions options = {});
ACCEL_API void fillUniform(std::span<double> out, double low, double high,
                           PhiloxPosition from, FillOptions options = {});
ACCEL_API void fillUniform(std::span<double> out, double low, double high,
                           const Generator& generator, FillOptions options = {});

// Normal(mean, stddev). Throws InvalidArgument unless mean is finite and
// stddev is finite and >= 0.
ACCEL_API void fillNormal(std::span<float> out, float mean, float stddev,
                          PhiloxPosition from, FillOptions options = {});
ACCEL_API void fillNormal(std::span<float> out, float mean, float stddev,
                          const Generator& generator, FillOptions options = {});
ACCEL_API void fillNormal(std::span<double> out, double mean, double stddev,
                          PhiloxPosition from, FillOptions options = {});
ACCEL_API void fillNormal(std::span<double> out, double mean, double stddev,
                          const Generator& generator, FillOptions options = {});

// 1 with probability p, else 0. Throws InvalidArgument unless p is in [0, 1].
ACCEL_API void fillBernoulli(std::span<std::uint8_t> out, double p, PhiloxPosition from,
                             FillOptions options = {});
ACCEL_API void fillBernoulli(std::span<std::uint8_t> out, double p,
                             const Generator& generator, FillOptions options = {});
ACCEL_API void fillBernoulli(std::span<float> out, double p, PhiloxPosition from,
                             FillOptions options = {});
ACCEL_API void fillBernoulli(std::span<float> out, double p, const Generator& generator,
                             FillOptions options = {});

}  // namespace accel
