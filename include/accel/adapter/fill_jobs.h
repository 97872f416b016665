// The kernel parameters of a device fill, from the plugin API's description
// of it (a kind ACCEL_FILL_*, its a and b): what a backend's fill kernel
// needs beyond the output and the Philox position. Written once for the
// core's fills (random_fill.cpp, accel/kit/device_fill_jobs.h) and every
// backend's kernels, so that a device fill writes the host fill's bits.
// Part of the plugin adapter (accel/plugin_adapter.h): header-only, C++17.
//
// The parameters are not checked here: the core checks them before it hands
// a fill to a backend (accel_fill_fns in accel/plugin_abi.h), and its host
// fills check them before calling these.
//
// Thread-safety: pure functions. Never throw.
#ifndef ACCEL_ADAPTER_FILL_JOBS_H
#define ACCEL_ADAPTER_FILL_JOBS_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "accel/plugin_abi.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

// A uniform fill's mapping in its element type Real: [0, 1) when not
// ranged, else low + u * range, clamped to below_high (the largest Real
// below high: rounding never produces high itself).
template <typename Real>
struct UniformMapping {
  bool ranged = false;
  Real low = 0;
  Real range = 1;
  Real below_high = 1;
};

// The ranged mapping onto [low, high) (the host's fillUniform with a range).
template <typename Real>
[[nodiscard]] UniformMapping<Real> rangedUniform(Real low, Real high) noexcept {
  return {true, low, static_cast<Real>(high - low),
          std::nextafter(high, -std::numeric_limits<Real>::infinity())};
}

// A device fill's mapping: [0, 1), a device fill's default range, is the
// host's unranged fill, whose mapping differs from a range's.
template <typename Real>
[[nodiscard]] UniformMapping<Real> deviceUniform(Real low, Real high) noexcept {
  return low == Real(0) && high == Real(1) ? UniformMapping<Real>{}
                                           : rangedUniform(low, high);
}

// "fillBits", "fillUniform", "fillNormal" or "fillBernoulli": the public
// function (accel/device_fill.h) a fill of `kind` is written with, for
// messages; "fill" for a value that is no kind.
[[nodiscard]] constexpr const char* fillApiName(std::int32_t kind) noexcept {
  switch (kind) {
    case ACCEL_FILL_BITS32:
    case ACCEL_FILL_BITS64:
      return "fillBits";
    case ACCEL_FILL_UNIFORM_FLOAT:
    case ACCEL_FILL_UNIFORM_DOUBLE:
      return "fillUniform";
    case ACCEL_FILL_NORMAL_FLOAT:
    case ACCEL_FILL_NORMAL_DOUBLE:
      return "fillNormal";
    case ACCEL_FILL_BERNOULLI_U8:
    case ACCEL_FILL_BERNOULLI_FLOAT:
      return "fillBernoulli";
    default:
      return "fill";
  }
}

// The bytes of one element of a fill of `kind` (4 for a value that is no
// kind).
[[nodiscard]] constexpr std::size_t fillElementBytes(std::int32_t kind) noexcept {
  switch (kind) {
    case ACCEL_FILL_BITS64:
    case ACCEL_FILL_UNIFORM_DOUBLE:
    case ACCEL_FILL_NORMAL_DOUBLE:
      return 8;
    case ACCEL_FILL_BERNOULLI_U8:
      return 1;
    default:
      return 4;
  }
}

// floor(p * 2^32), in [0, 2^32], for p in [0, 1]: an output x gives true
// iff x < threshold, so P(true) = threshold / 2^32, within 2^-32 of p.
[[nodiscard]] constexpr std::uint64_t bernoulliThreshold(double p) noexcept {
  return static_cast<std::uint64_t>(p * 0x1p32);
}

// Every kernel parameter of a fill of `kind` with `a` and `b`, in double
// (a float fill's values are floats, stored exactly): the uniform mapping,
// the normal's mean and stddev, the Bernoulli threshold. Fields a kind does
// not use keep their defaults.
struct FillParameters {
  UniformMapping<double> uniform;
  double mean = 0;
  double stddev = 1;
  std::uint64_t threshold = 0;
};

[[nodiscard]] inline FillParameters fillParameters(std::int32_t kind, double a,
                                                   double b) noexcept {
  FillParameters p;
  switch (kind) {
    case ACCEL_FILL_UNIFORM_FLOAT: {
      const UniformMapping<float> m =
          deviceUniform(static_cast<float>(a), static_cast<float>(b));
      p.uniform = {m.ranged, m.low, m.range, m.below_high};
      break;
    }
    case ACCEL_FILL_UNIFORM_DOUBLE:
      p.uniform = deviceUniform(a, b);
      break;
    case ACCEL_FILL_NORMAL_FLOAT:
      p.mean = static_cast<float>(a);
      p.stddev = static_cast<float>(b);
      break;
    case ACCEL_FILL_NORMAL_DOUBLE:
      p.mean = a;
      p.stddev = b;
      break;
    case ACCEL_FILL_BERNOULLI_U8:
    case ACCEL_FILL_BERNOULLI_FLOAT:
      p.threshold = bernoulliThreshold(a);
      break;
    default:
      break;
  }
  return p;
}

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_FILL_JOBS_H
