// Host random fills: the scalar reference path, parameter checks, path
// selection and the multi-threaded split. The SIMD paths live in
// random_fill_avx2.cpp / random_fill_avx512.cpp and must match fillScalar bit
// for bit; this file is compiled with -ffp-contract=off (simd_flags.cmake) so
// that every a * b + c below is rounded twice, as the SIMD code does.
#include "accel/random_fill.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <system_error>
#include <thread>
#include <vector>

#include "accel/adapter/fill_jobs.h"
#include "accel/error.h"
#include "accel/philox_generator.h"
#include "hooks/enum_names.h"
#include "random/random_fill_kernels.h"

namespace accel {
namespace detail {
namespace {

std::size_t elementBytes(const FillJob& job) noexcept {
  switch (job.kind) {
    case FillKind::Uint64:
    case FillKind::UniformDouble:
    case FillKind::NormalDouble:
      return 8;
    case FillKind::Bernoulli:
      return job.output == FillOutput::Byte ? 1 : 4;
    default:
      return 4;
  }
}

}  // namespace

FillJob sliceFillJob(const FillJob& job, std::size_t first, std::size_t count) noexcept {
  FillJob slice = job;
  slice.out = static_cast<std::uint8_t*>(job.out) + first * elementBytes(job);
  slice.count = count;
  slice.offset = job.offset + fillOutputs(job.kind, first);
  return slice;
}

void fillScalar(const FillJob& job) noexcept { fillElements(job, 0, job.count); }

}  // namespace detail

// ---------------------------------------------------------------------------
// Public mappings.

float uniformFloatFromBits(std::uint32_t bits, float from, float to) noexcept {
  const float u = uniformFloatFromBits(bits);
  return detail::minFloat(u * (to - from) + from,
                          std::nextafter(to, -std::numeric_limits<float>::infinity()));
}

double uniformDoubleFromBits(std::uint32_t first, std::uint32_t second, double from,
                             double to) noexcept {
  const double u = uniformDoubleFromBits(first, second);
  return detail::minDouble(u * (to - from) + from,
                           std::nextafter(to, -std::numeric_limits<double>::infinity()));
}

std::array<float, 2> normalFloatPairFromBits(std::uint32_t first,
                                             std::uint32_t second) noexcept {
  float z[2];
  detail::normalFloatPair(first, second, z);
  return {z[0], z[1]};
}

std::array<double, 2> normalDoublePairFromBits(std::uint32_t first, std::uint32_t second,
                                               std::uint32_t third,
                                               std::uint32_t fourth) noexcept {
  double z[2];
  detail::normalDoublePair(detail::joinWords(first, second),
                           detail::joinWords(third, fourth), z);
  return {z[0], z[1]};
}

// ---------------------------------------------------------------------------
// Paths.

namespace {

bool cpuHasAvx2() noexcept {
#if defined(ACCEL_FILL_HAVE_AVX2)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

bool cpuHasAvx512() noexcept {
#if defined(ACCEL_FILL_HAVE_AVX512)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

struct CpuPaths {
  bool avx2 = cpuHasAvx2();
  bool avx512 = cpuHasAvx512();
};

const CpuPaths& cpuPaths() noexcept {
  static const CpuPaths paths;
  return paths;
}

}  // namespace

bool isFillPathSupported(FillPath path) noexcept {
  switch (path) {
    case FillPath::Auto:
    case FillPath::Scalar:
      return true;
    case FillPath::Avx2:
      return cpuPaths().avx2;
    case FillPath::Avx512:
      return cpuPaths().avx512;
  }
  return false;
}

FillPath resolveFillPath(FillPath path) noexcept {
  if (path != FillPath::Auto) return path;
  if (cpuPaths().avx512) return FillPath::Avx512;
  if (cpuPaths().avx2) return FillPath::Avx2;
  return FillPath::Scalar;
}

namespace {

constexpr detail::EnumNames<FillPath::Avx512> kFillPathNames{"auto", "scalar", "avx2",
                                                             "avx512"};

}  // namespace

std::string_view fillPathName(FillPath path) noexcept { return kFillPathNames[path]; }

// ---------------------------------------------------------------------------
// Running a fill.

namespace {

using detail::FillJob;
using detail::FillOutput;

// Below this many elements per thread, starting a thread costs more than it saves.
constexpr std::size_t kMinElementsPerThread = 16 * 1024;
// Thread ranges start on multiples of this (even, as normal pairs need; and a
// whole number of cache lines for every element type when `out` is aligned).
constexpr std::size_t kSplitElements = 64;
constexpr unsigned kMaxThreads = 256;

FillPath checkedPath(const char* api, FillPath path) {
  ACCEL_CHECK(isFillPathSupported(path), NotSupported, api, ": fill path '",
              fillPathName(path),
              "' is not supported on this CPU (or this build); use FillPath::Auto, or "
              "ask isFillPathSupported() first");
  return resolveFillPath(path);
}

void runOnThisThread(const FillJob& job, FillPath path) noexcept {
  switch (path) {
#if defined(ACCEL_FILL_HAVE_AVX512)
    case FillPath::Avx512:
      detail::fillAvx512(job);
      return;
#endif
#if defined(ACCEL_FILL_HAVE_AVX2)
    case FillPath::Avx2:
      detail::fillAvx2(job);
      return;
#endif
    default:
      detail::fillScalar(job);
      return;
  }
}

void run(const FillJob& job, FillPath path, unsigned threads) {
  if (job.count == 0) return;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, kMaxThreads);
  const std::size_t useful = std::max<std::size_t>(1, job.count / kMinElementsPerThread);
  const std::size_t parts = std::min<std::size_t>(threads, useful);
  if (parts <= 1) {
    runOnThisThread(job, path);
    return;
  }
  // Every element's outputs are fixed by its index, so any split gives the
  // numbers one thread would.
  std::size_t per = (job.count + parts - 1) / parts;
  per = (per + kSplitElements - 1) / kSplitElements * kSplitElements;
  std::vector<std::thread> workers;
  workers.reserve(parts - 1);
  for (std::size_t begin = per; begin < job.count; begin += per) {
    const FillJob slice =
        detail::sliceFillJob(job, begin, std::min(per, job.count - begin));
    try {
      workers.emplace_back(runOnThisThread, slice, path);
    } catch (const std::system_error&) {
      runOnThisThread(slice, path);  // no thread to be had: do it here
    }
  }
  runOnThisThread(detail::sliceFillJob(job, 0, std::min(per, job.count)), path);
  for (std::thread& worker : workers) worker.join();
}

void checkPosition(const char* api, const FillJob& job, PhiloxPosition from) {
  const std::uint64_t outputs = fillOutputs(job.kind, job.count);
  ACCEL_CHECK(outputs <= std::numeric_limits<std::uint64_t>::max() - from.offset,
              InvalidArgument, api, ": ", job.count, " elements from offset ",
              from.offset,
              " would take the offset past 2^64 - 1; start from a smaller offset or "
              "another seed");
}

void fillAt(const char* api, FillJob job, PhiloxPosition from, FillOptions options) {
  const FillPath path = checkedPath(api, options.path);
  checkPosition(api, job, from);
  job.seed = from.seed;
  job.offset = from.offset;
  run(job, path, options.threads);
}

void fillFrom(const char* api, FillJob job, const Generator& generator,
              FillOptions options) {
  // Checks first, so that a rejected call consumes nothing.
  const FillPath path = checkedPath(api, options.path);
  const PhiloxPosition from = reservePhilox(generator, fillOutputs(job.kind, job.count));
  job.seed = from.seed;
  job.offset = from.offset;
  run(job, path, options.threads);
}

template <typename T>
FillJob makeJob(FillKind kind, std::span<T> out) {
  FillJob job;
  job.kind = kind;
  job.out = out.data();
  job.count = out.size();
  return job;
}

template <typename T>
FillJob uniformJob(const char* api, std::span<T> out, T low, T high) {
  FillJob uniform =
      makeJob(sizeof(T) == 4 ? FillKind::UniformFloat : FillKind::UniformDouble, out);
  const T range = high - low;
  ACCEL_CHECK(
      std::isfinite(low) && std::isfinite(high) && low < high && std::isfinite(range),
      InvalidArgument, api, "(low=", low, ", high=", high,
      "): needs low < high, with low, high and high - low finite");
  // The mapping device fills use too (accel/adapter/fill_jobs.h).
  const adapter::UniformMapping<T> mapping = adapter::rangedUniform(low, high);
  uniform.ranged = mapping.ranged;
  uniform.low = mapping.low;
  uniform.range = mapping.range;
  uniform.belowHigh = mapping.below_high;
  return uniform;
}

template <typename T>
FillJob normalJob(const char* api, std::span<T> out, T mean, T stddev) {
  FillJob normal =
      makeJob(sizeof(T) == 4 ? FillKind::NormalFloat : FillKind::NormalDouble, out);
  ACCEL_CHECK(std::isfinite(mean) && std::isfinite(stddev) && stddev >= 0,
              InvalidArgument, api, "(mean=", mean, ", stddev=", stddev,
              "): needs a finite mean and a finite stddev >= 0");
  normal.mean = mean;
  normal.stddev = stddev;
  return normal;
}

template <typename T>
FillJob bernoulliJob(const char* api, std::span<T> out, double p) {
  FillJob bernoulli = makeJob(FillKind::Bernoulli, out);
  ACCEL_CHECK(p >= 0.0 && p <= 1.0, InvalidArgument, api, "(p=", p,
              "): p is a probability and must be in [0, 1]");
  bernoulli.output = sizeof(T) == 1 ? FillOutput::Byte : FillOutput::Float;
  bernoulli.threshold = bernoulliThreshold(p);
  return bernoulli;
}

}  // namespace

// The validated jobs, for device fills (random_fill_elements.h).
namespace detail {
FillJob bitsFillJob(std::uint32_t* out, std::size_t count) {
  return makeJob(FillKind::Uint32, std::span(out, count));
}
FillJob bitsFillJob(std::uint64_t* out, std::size_t count) {
  return makeJob(FillKind::Uint64, std::span(out, count));
}
FillJob uniformFillJob(float* out, std::size_t count) {
  return makeJob(FillKind::UniformFloat, std::span(out, count));
}
FillJob uniformFillJob(double* out, std::size_t count) {
  return makeJob(FillKind::UniformDouble, std::span(out, count));
}
FillJob uniformFillJob(const char* api, float* out, std::size_t count, float low,
                       float high) {
  return uniformJob(api, std::span(out, count), low, high);
}
FillJob uniformFillJob(const char* api, double* out, std::size_t count, double low,
                       double high) {
  return uniformJob(api, std::span(out, count), low, high);
}
FillJob normalFillJob(const char* api, float* out, std::size_t count, float mean,
                      float stddev) {
  return normalJob(api, std::span(out, count), mean, stddev);
}
FillJob normalFillJob(const char* api, double* out, std::size_t count, double mean,
                      double stddev) {
  return normalJob(api, std::span(out, count), mean, stddev);
}
FillJob bernoulliFillJob(const char* api, std::uint8_t* out, std::size_t count,
                         double p) {
  return bernoulliJob(api, std::span(out, count), p);
}
FillJob bernoulliFillJob(const char* api, float* out, std::size_t count, double p) {
  return bernoulliJob(api, std::span(out, count), p);
}
}  // namespace detail

void fillBits(std::span<std::uint32_t> out, PhiloxPosition from, FillOptions options) {
  fillAt("fillBits", makeJob(FillKind::Uint32, out), from, options);
}
void fillBits(std::span<std::uint32_t> out, const Generator& generator,
              FillOptions options) {
  fillFrom("fillBits", makeJob(FillKind::Uint32, out), generator, options);
}
void fillBits(std::span<std::uint64_t> out, PhiloxPosition from, FillOptions options) {
  fillAt("fillBits", makeJob(FillKind::Uint64, out), from, options);
}
void fillBits(std::span<std::uint64_t> out, const Generator& generator,
              FillOptions options) {
  fillFrom("fillBits", makeJob(FillKind::Uint64, out), generator, options);
}

void fillUniform(std::span<float> out, PhiloxPosition from, FillOptions options) {
  fillAt("fillUniform", makeJob(FillKind::UniformFloat, out), from, options);
}
void fillUniform(std::span<float> out, const Generator& generator, FillOptions options) {
  fillFrom("fillUniform", makeJob(FillKind::UniformFloat, out), generator, options);
}
void fillUniform(std::span<double> out, PhiloxPosition from, FillOptions options) {
  fillAt("fillUniform", makeJob(FillKind::UniformDouble, out), from, options);
}
void fillUniform(std::span<double> out, const Generator& generator, FillOptions options) {
  fillFrom("fillUniform", makeJob(FillKind::UniformDouble, out), generator, options);
}

void fillUniform(std::span<float> out, float low, float high, PhiloxPosition from,
                 FillOptions options) {
  fillAt("fillUniform", uniformJob("fillUniform", out, low, high), from, options);
}
void fillUniform(std::span<float> out, float low, float high, const Generator& generator,
                 FillOptions options) {
  fillFrom("fillUniform", uniformJob("fillUniform", out, low, high), generator, options);
}
void fillUniform(std::span<double> out, double low, double high, PhiloxPosition from,
                 FillOptions options) {
  fillAt("fillUniform", uniformJob("fillUniform", out, low, high), from, options);
}
void fillUniform(std::span<double> out, double low, double high,
                 const Generator& generator, FillOptions options) {
  fillFrom("fillUniform", uniformJob("fillUniform", out, low, high), generator, options);
}

void fillNormal(std::span<float> out, float mean, float stddev, PhiloxPosition from,
                FillOptions options) {
  fillAt("fillNormal", normalJob("fillNormal", out, mean, stddev), from, options);
}
void fillNormal(std::span<float> out, float mean, float stddev,
                const Generator& generator, FillOptions options) {
  fillFrom("fillNormal", normalJob("fillNormal", out, mean, stddev), generator, options);
}
void fillNormal(std::span<double> out, double mean, double stddev, PhiloxPosition from,
                FillOptions options) {
  fillAt("fillNormal", normalJob("fillNormal", out, mean, stddev), from, options);
}
void fillNormal(std::span<double> out, double mean, double stddev,
                const Generator& generator, FillOptions options) {
  fillFrom("fillNormal", normalJob("fillNormal", out, mean, stddev), generator, options);
}

void fillBernoulli(std::span<std::uint8_t> out, double p, PhiloxPosition from,
                   FillOptions options) {
  fillAt("fillBernoulli", bernoulliJob("fillBernoulli", out, p), from, options);
}
void fillBernoulli(std::span<std::uint8_t> out, double p, const Generator& generator,
                   FillOptions options) {
  fillFrom("fillBernoulli", bernoulliJob("fillBernoulli", out, p), generator, options);
}
void fillBernoulli(std::span<float> out, double p, PhiloxPosition from,
                   FillOptions options) {
  fillAt("fillBernoulli", bernoulliJob("fillBernoulli", out, p), from, options);
}
void fillBernoulli(std::span<float> out, double p, const Generator& generator,
                   FillOptions options) {
  fillFrom("fillBernoulli", bernoulliJob("fillBernoulli", out, p), generator, options);
}

}  // namespace accel
