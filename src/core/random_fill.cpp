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

#include "accel/error.h"
#include "accel/philox_generator.h"
#include "random_fill_kernels.h"

namespace accel {
namespace detail {
namespace {

// Outputs of blocks [first, first + kReaderBlocks), computed side by side:
// one block alone is a chain of dependent multiplies, several keep the
// multiplier busy. Same arithmetic as philox4x32 (tests compare the two).
constexpr int kReaderBlocks = 4;

void philoxBlocks(std::uint64_t seed, std::uint64_t first,
                  std::uint32_t (&out)[4 * kReaderBlocks]) noexcept {
  std::uint32_t c0[kReaderBlocks], c1[kReaderBlocks], c2[kReaderBlocks] = {},
                                                      c3[kReaderBlocks] = {};
  for (int j = 0; j < kReaderBlocks; ++j) {
    c0[j] = static_cast<std::uint32_t>(first + j);
    c1[j] = static_cast<std::uint32_t>((first + j) >> 32);
  }
  auto k0 = static_cast<std::uint32_t>(seed);
  auto k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    for (int j = 0; j < kReaderBlocks; ++j) {
      const std::uint64_t product0 = std::uint64_t{kPhiloxMultiplier0} * c0[j];
      const std::uint64_t product1 = std::uint64_t{kPhiloxMultiplier1} * c2[j];
      c0[j] = static_cast<std::uint32_t>(product1 >> 32) ^ c1[j] ^ k0;
      c1[j] = static_cast<std::uint32_t>(product1);
      c2[j] = static_cast<std::uint32_t>(product0 >> 32) ^ c3[j] ^ k1;
      c3[j] = static_cast<std::uint32_t>(product0);
    }
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  for (int j = 0; j < kReaderBlocks; ++j) {
    out[4 * j + 0] = c0[j];
    out[4 * j + 1] = c1[j];
    out[4 * j + 2] = c2[j];
    out[4 * j + 3] = c3[j];
  }
}

// Stream outputs in order from a position, kReaderBlocks blocks at a time.
class StreamReader {
 public:
  StreamReader(std::uint64_t seed, std::uint64_t position) noexcept
      : seed_(seed), block_(position / 4), next_(static_cast<int>(position % 4)) {
    philoxBlocks(seed_, block_, words_);
  }

  std::uint32_t next() noexcept {
    if (next_ == 4 * kReaderBlocks) [[unlikely]] {
      block_ += kReaderBlocks;
      philoxBlocks(seed_, block_, words_);
      next_ = 0;
    }
    return words_[next_++];
  }

 private:
  std::uint64_t seed_;
  std::uint64_t block_;
  int next_;
  std::uint32_t words_[4 * kReaderBlocks];
};

float minFloat(float x, float bound) noexcept {
  return x < bound ? x : bound;  // as MINPS: the bound unless x is below it
}

double minDouble(double x, double bound) noexcept { return x < bound ? x : bound; }

float logFloat(float u) noexcept {
  using namespace fconst;
  const auto bits = std::bit_cast<std::uint32_t>(u);
  const auto exponent = static_cast<std::int32_t>(bits >> 23) - 127;
  float m = std::bit_cast<float>((bits & 0x007FFFFFu) | 0x3F800000u);
  const bool big = m > kSqrt2;
  if (big) m = m * 0.5f;
  const float e = static_cast<float>(exponent) + (big ? 1.0f : 0.0f);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float poly = kLog[3];
  for (int k = 2; k >= 0; --k) poly = kLog[k] + z * poly;
  poly = z * poly;
  const float twoS = s + s;
  const float logm = twoS + twoS * poly;
  return e * kLn2 + logm;
}

std::array<float, 2> normalFloatPair(std::uint32_t first, std::uint32_t second) noexcept {
  using namespace fconst;
  const float u1 = static_cast<float>((first >> 8) + 1) * 0x1p-24f;
  const float radius = std::sqrt(-2.0f * logFloat(u1));

  // The angle in quarter turns: quadrant q and a remainder r in [-1/2, 1/2),
  // all in exact integer arithmetic.
  const std::uint32_t turn = second >> 8;
  const std::uint32_t quadrant = (turn + (1u << 21)) >> 22;
  const auto reduced = static_cast<std::int32_t>(turn - (quadrant << 22));
  const float r = static_cast<float>(reduced) * 0x1p-22f;
  const float z = r * r;
  float sinPoly = kSin[4];
  for (int k = 3; k >= 0; --k) sinPoly = kSin[k] + z * sinPoly;
  const float sinR = r * sinPoly;
  float cosPoly = kCos[4];
  for (int k = 3; k >= 0; --k) cosPoly = kCos[k] + z * cosPoly;
  const float cosR = 1.0f + z * cosPoly;

  const bool swap = (quadrant & 1) != 0;
  const std::uint32_t sinSign = (quadrant & 2) << 30;
  const std::uint32_t cosSign = ((quadrant + 1) & 2) << 30;
  const float sinT =
      std::bit_cast<float>(std::bit_cast<std::uint32_t>(swap ? cosR : sinR) ^ sinSign);
  const float cosT =
      std::bit_cast<float>(std::bit_cast<std::uint32_t>(swap ? sinR : cosR) ^ cosSign);
  return {radius * cosT, radius * sinT};
}

double logDouble(double u) noexcept {
  using namespace dconst;
  const auto bits = std::bit_cast<std::uint64_t>(u);
  const auto exponent = static_cast<std::int64_t>(bits >> 52) - 1023;
  double m =
      std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const bool big = m > kSqrt2;
  if (big) m = m * 0.5;
  const double e = static_cast<double>(exponent) + (big ? 1.0 : 0.0);
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double poly = kLog[10];
  for (int k = 9; k >= 0; --k) poly = kLog[k] + z * poly;
  poly = z * poly;
  const double twoS = s + s;
  const double logm = twoS + twoS * poly;
  return e * kLn2 + logm;
}

std::uint64_t joinWords(std::uint32_t low, std::uint32_t high) noexcept {
  return (static_cast<std::uint64_t>(high) << 32) | low;
}

std::array<double, 2> normalDoublePair(std::uint64_t first,
                                       std::uint64_t second) noexcept {
  using namespace dconst;
  const double u1 = static_cast<double>((first >> 11) + 1) * 0x1p-53;
  const double radius = std::sqrt(-2.0 * logDouble(u1));

  const std::uint64_t turn = second >> 11;
  const std::uint64_t quadrant = (turn + (1ull << 50)) >> 51;
  const auto reduced = static_cast<std::int64_t>(turn - (quadrant << 51));
  const double r = static_cast<double>(reduced) * 0x1p-51;
  const double z = r * r;
  double sinPoly = kSin[8];
  for (int k = 7; k >= 0; --k) sinPoly = kSin[k] + z * sinPoly;
  const double sinR = r * sinPoly;
  double cosPoly = kCos[8];
  for (int k = 7; k >= 0; --k) cosPoly = kCos[k] + z * cosPoly;
  const double cosR = 1.0 + z * cosPoly;

  const bool swap = (quadrant & 1) != 0;
  const std::uint64_t sinSign = (quadrant & 2) << 62;
  const std::uint64_t cosSign = ((quadrant + 1) & 2) << 62;
  const double sinT =
      std::bit_cast<double>(std::bit_cast<std::uint64_t>(swap ? cosR : sinR) ^ sinSign);
  const double cosT =
      std::bit_cast<double>(std::bit_cast<std::uint64_t>(swap ? sinR : cosR) ^ cosSign);
  return {radius * cosT, radius * sinT};
}

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

template <typename T>
T* outputAs(const FillJob& job) noexcept {
  return static_cast<T*>(job.out);
}

}  // namespace

FillJob sliceFillJob(const FillJob& job, std::size_t first, std::size_t count) noexcept {
  FillJob slice = job;
  slice.out = static_cast<std::uint8_t*>(job.out) + first * elementBytes(job);
  slice.count = count;
  slice.offset = job.offset + fillOutputs(job.kind, first);
  return slice;
}

void fillScalar(const FillJob& job) noexcept {
  StreamReader in(job.seed, job.offset);
  const std::size_t n = job.count;
  switch (job.kind) {
    case FillKind::Uint32: {
      auto* out = outputAs<std::uint32_t>(job);
      for (std::size_t i = 0; i < n; ++i) out[i] = in.next();
      return;
    }
    case FillKind::Uint64: {
      auto* out = outputAs<std::uint64_t>(job);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t low = in.next();
        out[i] = joinWords(low, in.next());
      }
      return;
    }
    case FillKind::UniformFloat: {
      auto* out = outputAs<float>(job);
      const auto low = static_cast<float>(job.low);
      const auto range = static_cast<float>(job.range);
      const auto belowHigh = static_cast<float>(job.belowHigh);
      for (std::size_t i = 0; i < n; ++i) {
        const float u = uniformFloatFromBits(in.next());
        out[i] = job.ranged ? minFloat(u * range + low, belowHigh) : u;
      }
      return;
    }
    case FillKind::UniformDouble: {
      auto* out = outputAs<double>(job);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t first = in.next();
        const double u = uniformDoubleFromBits(first, in.next());
        out[i] = job.ranged ? minDouble(u * job.range + job.low, job.belowHigh) : u;
      }
      return;
    }
    case FillKind::NormalFloat: {
      auto* out = outputAs<float>(job);
      const auto mean = static_cast<float>(job.mean);
      const auto stddev = static_cast<float>(job.stddev);
      for (std::size_t i = 0; i < n; i += 2) {
        const std::uint32_t first = in.next();
        const auto z = normalFloatPair(first, in.next());
        out[i] = z[0] * stddev + mean;
        if (i + 1 < n) out[i + 1] = z[1] * stddev + mean;
      }
      return;
    }
    case FillKind::NormalDouble: {
      auto* out = outputAs<double>(job);
      for (std::size_t i = 0; i < n; i += 2) {
        const std::uint32_t w0 = in.next();
        const std::uint32_t w1 = in.next();
        const std::uint32_t w2 = in.next();
        const std::uint32_t w3 = in.next();
        const auto z = normalDoublePair(joinWords(w0, w1), joinWords(w2, w3));
        out[i] = z[0] * job.stddev + job.mean;
        if (i + 1 < n) out[i + 1] = z[1] * job.stddev + job.mean;
      }
      return;
    }
    case FillKind::Bernoulli: {
      for (std::size_t i = 0; i < n; ++i) {
        const bool hit = bernoulliFromBits(in.next(), job.threshold);
        if (job.output == FillOutput::Byte) {
          outputAs<std::uint8_t>(job)[i] = hit ? 1 : 0;
        } else {
          outputAs<float>(job)[i] = hit ? 1.0f : 0.0f;
        }
      }
      return;
    }
  }
}

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
  return detail::normalFloatPair(first, second);
}

std::array<double, 2> normalDoublePairFromBits(std::uint32_t first, std::uint32_t second,
                                               std::uint32_t third,
                                               std::uint32_t fourth) noexcept {
  return detail::normalDoublePair(detail::joinWords(first, second),
                                  detail::joinWords(third, fourth));
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

std::string_view fillPathName(FillPath path) noexcept {
  switch (path) {
    case FillPath::Auto:
      return "auto";
    case FillPath::Scalar:
      return "scalar";
    case FillPath::Avx2:
      return "avx2";
    case FillPath::Avx512:
      return "avx512";
  }
  return "unknown";
}

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
  uniform.ranged = true;
  uniform.low = low;
  uniform.range = range;
  uniform.belowHigh = std::nextafter(high, -std::numeric_limits<T>::infinity());
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
