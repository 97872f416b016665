// Private to random_fill*.cpp: the per-ISA functions that carry out a fill
// (FillJob, in accel/random_fill_elements.h: one fill, validated and reduced
// to plain data).
//
// The ISA files (random_fill_avx2.cpp, random_fill_avx512.cpp) are compiled
// with -m flags, so they call nothing inline from shared headers (its code
// could be merged with another TU's copy and run on a CPU without the ISA).
// They read only the plain data here and in random_fill_elements.h; the
// inline functions there are called from random_fill.cpp (and device code).
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/random_fill.h"
#include "accel/random_fill_elements.h"

namespace accel::detail {

// The constants of the normal mapping as arrays, for the SIMD paths; the
// values live in random_fill_elements.h (one source for host and device).
inline constexpr FloatNormalConstants kFloatNormal = floatNormalConstants();
inline constexpr DoubleNormalConstants kDoubleNormal = doubleNormalConstants();
namespace fconst {
inline constexpr float kSqrt2 = kFloatNormal.sqrt2;
inline constexpr float kLn2 = kFloatNormal.ln2;
inline constexpr const float (&kLog)[4] = kFloatNormal.log;
inline constexpr const float (&kSin)[5] = kFloatNormal.sin;
inline constexpr const float (&kCos)[5] = kFloatNormal.cos;
}  // namespace fconst
namespace dconst {
inline constexpr double kSqrt2 = kDoubleNormal.sqrt2;
inline constexpr double kLn2 = kDoubleNormal.ln2;
inline constexpr const double (&kLog)[11] = kDoubleNormal.log;
inline constexpr const double (&kSin)[9] = kDoubleNormal.sin;
inline constexpr const double (&kCos)[9] = kDoubleNormal.cos;
}  // namespace dconst

// Elements [first, first + count) of `job` as a fill of its own. `first` must
// be even for normal fills.
FillJob sliceFillJob(const FillJob& job, std::size_t first, std::size_t count) noexcept;

// Each carries out a whole job on one thread; the results are bit-identical.
void fillScalar(const FillJob& job) noexcept;
void fillAvx2(const FillJob& job) noexcept;    // only when ACCEL_FILL_HAVE_AVX2
void fillAvx512(const FillJob& job) noexcept;  // only when ACCEL_FILL_HAVE_AVX512

}  // namespace accel::detail
