// The FillJob behind each public fill of a device backend.
//
// A backend that fills device memory with the host fills' bits (the CUDA
// and OpenCL backends' accel/<backend>/fill.h) offers the same overloads:
// fillBits, fillUniform(low, high), fillNormal(mean, stddev),
// fillBernoulli(p), each for the host fills' element types. What each
// overload means as a job (accel/random_fill_elements.h), with the host
// fills' checks, is written once here; a backend validates its stream,
// claims the generator's range and launches the job's kernel:
//
//   void fillUniform(Stream s, float* data, std::size_t n, float low, float high,
//                    Generator g) {
//     enqueue(s, kit::uniformFillJob(data, n, low, high), std::move(g));
//   }
//
// and names the call in its own errors with fillApiName(job.kind).
//
// Thread-safety: pure functions. Each throws what the host fills' checks
// throw (InvalidArgument naming the public call), nothing else.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/adapter/fill_jobs.h"
#include "accel/random_fill.h"
#include "accel/random_fill_elements.h"

namespace accel::kit {

// The public call a job of `kind` comes from, for error messages.
[[nodiscard]] constexpr const char* fillApiName(FillKind kind) noexcept {
  switch (kind) {
    case FillKind::Uint32:
    case FillKind::Uint64:
      return "fillBits";
    case FillKind::UniformFloat:
    case FillKind::UniformDouble:
      return "fillUniform";
    case FillKind::NormalFloat:
    case FillKind::NormalDouble:
      return "fillNormal";
    case FillKind::Bernoulli:
      return "fillBernoulli";
  }
  return "fill";
}

template <typename Bits>
[[nodiscard]] accel::detail::FillJob bitsFillJob(Bits* data, std::size_t count) {
  return accel::detail::bitsFillJob(data, count);
}

// [0, 1) is the host's unranged fill, whose mapping differs from a range's
// (a device fill's defaults are low = 0, high = 1).
template <typename Real>
[[nodiscard]] accel::detail::FillJob uniformFillJob(Real* data, std::size_t count,
                                                    Real low, Real high) {
  return !adapter::deviceUniform(low, high).ranged
             ? accel::detail::uniformFillJob(data, count)
             : accel::detail::uniformFillJob("fillUniform", data, count, low, high);
}

template <typename Real>
[[nodiscard]] accel::detail::FillJob normalFillJob(Real* data, std::size_t count,
                                                   Real mean, Real stddev) {
  return accel::detail::normalFillJob("fillNormal", data, count, mean, stddev);
}

template <typename Out>
[[nodiscard]] accel::detail::FillJob bernoulliFillJob(Out* data, std::size_t count,
                                                      double p) {
  return accel::detail::bernoulliFillJob("fillBernoulli", data, count, p);
}

}  // namespace accel::kit
