// Private to random_fill*.cpp: one fill, validated and reduced to plain data,
// and the per-ISA functions that carry it out.
//
// The ISA files (random_fill_avx2.cpp, random_fill_avx512.cpp) are compiled
// with -m flags, so they call nothing inline from shared headers (its code
// could be merged with another TU's copy and run on a CPU without the ISA).
// This header therefore holds only plain data and declarations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/random_fill.h"

namespace accel::detail {

// Bernoulli fills write either bytes or floats.
enum class FillOutput : std::uint8_t { Native, Byte, Float };

struct FillJob {
  FillKind kind = FillKind::Uint32;
  FillOutput output = FillOutput::Native;
  void* out = nullptr;
  std::size_t count = 0;
  std::uint64_t seed = 0;
  // Position of the first output element 0 draws from.
  std::uint64_t offset = 0;
  // Uniform: [low, high) when ranged; else [0, 1). Float fills store their
  // float parameters here exactly and convert back.
  bool ranged = false;
  double low = 0;
  double range = 1;
  // The largest value of the element type below `high`: the clamp that keeps
  // rounding from producing `high` itself.
  double belowHigh = 1;
  // Normal.
  double mean = 0;
  double stddev = 1;
  // Bernoulli: bernoulliThreshold(p).
  std::uint64_t threshold = 0;
};

// Constants of the normal mapping (docs/random.md), shared by the scalar and
// SIMD paths. Hexadecimal literals: exact, whatever the compiler.
//   kLog[k]: 1 / (2k + 3), the atanh series of log.
//   kSin[k]: (-1)^k (pi/2)^(2k+1) / (2k+1)!   kCos[k]: (-1)^(k+1) (pi/2)^(2k+2) / (2k+2)!
namespace fconst {
inline constexpr float kSqrt2 = 0x1.6a09e6p+0f;
inline constexpr float kLn2 = 0x1.62e430p-1f;
inline constexpr float kLog[4] = {0x1.555556p-2f, 0x1.99999ap-3f, 0x1.24924ap-3f,
                                  0x1.c71c72p-4f};
inline constexpr float kSin[5] = {0x1.921fb6p+0f, -0x1.4abbcep-1f, 0x1.466bc6p-4f,
                                  -0x1.32d2ccp-8f, 0x1.507834p-13f};
inline constexpr float kCos[5] = {-0x1.3bd3ccp+0f, 0x1.03c1f0p-2f, -0x1.55d3c8p-6f,
                                  0x1.e1f506p-11f, -0x1.a6d1f2p-16f};
}  // namespace fconst

namespace dconst {
inline constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
inline constexpr double kLn2 = 0x1.62e42fefa39efp-1;
inline constexpr double kLog[11] = {
    0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
    0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
    0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5,
    0x1.8618618618618p-5, 0x1.642c8590b2164p-5};
inline constexpr double kSin[9] = {
    0x1.921fb54442d18p+0,  -0x1.4abbce625be53p-1,  0x1.466bc6775aae2p-4,
    -0x1.32d2cce62bd86p-8, 0x1.50783487ee782p-13,  -0x1.e3074fde8871fp-19,
    0x1.e8f434d018d63p-25, -0x1.6fadb9f155744p-31, 0x1.aaec32af93359p-38};
inline constexpr double kCos[9] = {
    -0x1.3bd3cc9be45dep+0,  0x1.03c1f081b5ac4p-2,   -0x1.55d3c7e3cbffap-6,
    0x1.e1f506891babbp-11,  -0x1.a6d1f2a204a8cp-16, 0x1.f9d38a3763cc3p-22,
    -0x1.b6e24f44b128fp-28, 0x1.20c62c2f2d7f5p-34,  -0x1.2a0c591af8314p-41};
}  // namespace dconst

// Elements a fill may be split at: normal fills draw whole pairs.
inline constexpr std::size_t kNormalPairElements = 2;

// Elements [first, first + count) of `job` as a fill of its own. `first` must
// be even for normal fills.
FillJob sliceFillJob(const FillJob& job, std::size_t first, std::size_t count) noexcept;

// Each carries out a whole job on one thread; the results are bit-identical.
void fillScalar(const FillJob& job) noexcept;
void fillAvx2(const FillJob& job) noexcept;    // only when ACCEL_FILL_HAVE_AVX2
void fillAvx512(const FillJob& job) noexcept;  // only when ACCEL_FILL_HAVE_AVX512

}  // namespace accel::detail
