// The per-element code of every random fill, written once for the host
// compiler and nvcc alike.
//
// A fill is reduced to a FillJob (plain data: what to write, where, from which
// (seed, offset), with which parameters), and fillElements(job, first, count)
// writes elements [first, first + count) of it. The host's scalar fill
// (accel/random_fill.h) is fillElements over the whole job; a device kernel
// (the CUDA backend's) only maps its threads to element ranges and calls the
// same function. So the host tests, which compare the scalar fill with the
// SIMD paths and the Random123 vectors, test the very code the GPU runs.
//
// Bit-identity across compilers needs every operation rounded on its own:
// compile host files that include this with -ffp-contract=off and device code
// with -fmad=false (nvcc contracts a * b + c into an FMA by default), and
// never with fast-math flags. Division and sqrt must be IEEE (nvcc's
// defaults, -prec-div=true -prec-sqrt=true).
//
// Most users want accel/random_fill.h, not this header: it is for backends
// that write fill kernels.
//
// Thread-safety: pure functions; concurrent calls must write disjoint
// elements. The *FillJob builders are thread-safe.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "accel/export.h"
#include "accel/host_device.h"
#include "accel/philox.h"
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

// Elements a fill may be split at: normal fills draw whole pairs.
inline constexpr std::size_t kNormalPairElements = 2;

// ---------------------------------------------------------------------------
// Validated jobs (host only). They apply the checks of the public fills in
// accel/random_fill.h and throw InvalidArgument with the same messages; `api`
// names the caller in them. seed and offset are left 0 for the caller.

ACCEL_API FillJob bitsFillJob(std::uint32_t* out, std::size_t count);
ACCEL_API FillJob bitsFillJob(std::uint64_t* out, std::size_t count);
// [0, 1) without range; [low, high) with one.
ACCEL_API FillJob uniformFillJob(float* out, std::size_t count);
ACCEL_API FillJob uniformFillJob(double* out, std::size_t count);
ACCEL_API FillJob uniformFillJob(const char* api, float* out, std::size_t count,
                                 float low, float high);
ACCEL_API FillJob uniformFillJob(const char* api, double* out, std::size_t count,
                                 double low, double high);
ACCEL_API FillJob normalFillJob(const char* api, float* out, std::size_t count,
                                float mean, float stddev);
ACCEL_API FillJob normalFillJob(const char* api, double* out, std::size_t count,
                                double mean, double stddev);
ACCEL_API FillJob bernoulliFillJob(const char* api, std::uint8_t* out, std::size_t count,
                                   double p);
ACCEL_API FillJob bernoulliFillJob(const char* api, float* out, std::size_t count,
                                   double p);

// ---------------------------------------------------------------------------
// Constants of the normal mapping (docs/random.md). Hexadecimal literals:
// exact, whatever the compiler. Returned by constexpr functions rather than
// kept in namespace-scope arrays because device code cannot read host arrays.
//   log[k]: 1 / (2k + 3), the atanh series of log.
//   sin[k]: (-1)^k (pi/2)^(2k+1) / (2k+1)!   cos[k]: (-1)^(k+1) (pi/2)^(2k+2) / (2k+2)!
struct FloatNormalConstants {
  float sqrt2;
  float ln2;
  float log[4];
  float sin[5];
  float cos[5];
};
struct DoubleNormalConstants {
  double sqrt2;
  double ln2;
  double log[11];
  double sin[9];
  double cos[9];
};

[[nodiscard]] ACCEL_HOST_DEVICE constexpr FloatNormalConstants
floatNormalConstants() noexcept {
  return {
      0x1.6a09e6p+0f,
      0x1.62e430p-1f,
      {0x1.555556p-2f, 0x1.99999ap-3f, 0x1.24924ap-3f, 0x1.c71c72p-4f},
      {0x1.921fb6p+0f, -0x1.4abbcep-1f, 0x1.466bc6p-4f, -0x1.32d2ccp-8f, 0x1.507834p-13f},
      {-0x1.3bd3ccp+0f, 0x1.03c1f0p-2f, -0x1.55d3c8p-6f, 0x1.e1f506p-11f,
       -0x1.a6d1f2p-16f}};
}

[[nodiscard]] ACCEL_HOST_DEVICE constexpr DoubleNormalConstants
doubleNormalConstants() noexcept {
  return {0x1.6a09e667f3bcdp+0,
          0x1.62e42fefa39efp-1,
          {0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
           0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
           0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5,
           0x1.8618618618618p-5, 0x1.642c8590b2164p-5},
          {0x1.921fb54442d18p+0, -0x1.4abbce625be53p-1, 0x1.466bc6775aae2p-4,
           -0x1.32d2cce62bd86p-8, 0x1.50783487ee782p-13, -0x1.e3074fde8871fp-19,
           0x1.e8f434d018d63p-25, -0x1.6fadb9f155744p-31, 0x1.aaec32af93359p-38},
          {-0x1.3bd3cc9be45dep+0, 0x1.03c1f081b5ac4p-2, -0x1.55d3c7e3cbffap-6,
           0x1.e1f506891babbp-11, -0x1.a6d1f2a204a8cp-16, 0x1.f9d38a3763cc3p-22,
           -0x1.b6e24f44b128fp-28, 0x1.20c62c2f2d7f5p-34, -0x1.2a0c591af8314p-41}};
}

// ---------------------------------------------------------------------------
// Arithmetic helpers with the same result on host and device.

ACCEL_HOST_DEVICE inline float sqrtRounded(float x) noexcept {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

ACCEL_HOST_DEVICE inline double sqrtRounded(double x) noexcept {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

ACCEL_HOST_DEVICE inline float minFloat(float x, float bound) noexcept {
  return x < bound ? x : bound;  // as MINPS: the bound unless x is below it
}

ACCEL_HOST_DEVICE inline double minDouble(double x, double bound) noexcept {
  return x < bound ? x : bound;
}

ACCEL_HOST_DEVICE inline std::uint64_t joinWords(std::uint32_t low,
                                                 std::uint32_t high) noexcept {
  return (static_cast<std::uint64_t>(high) << 32) | low;
}

// ---------------------------------------------------------------------------
// The stream, read in order.

// Outputs of blocks [first, first + kReaderBlocks), computed side by side:
// one block alone is a chain of dependent multiplies, several keep the
// multiplier busy. Same arithmetic as philox4x32 (tests compare the two).
inline constexpr int kReaderBlocks = 4;

ACCEL_HOST_DEVICE inline void philoxBlocks(
    std::uint64_t seed, std::uint64_t first,
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

// Stream outputs in order from a position, kReaderBlocks blocks at a time
// (several blocks side by side keep a CPU's multiplier busy).
class StreamReader {
 public:
  ACCEL_HOST_DEVICE StreamReader(std::uint64_t seed, std::uint64_t position) noexcept
      : seed_(seed), block_(position / 4), next_(static_cast<int>(position % 4)) {
    philoxBlocks(seed_, block_, words_);
  }

  ACCEL_HOST_DEVICE std::uint32_t next() noexcept {
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

// philoxBlock(seed, 0, block) of accel/philox.h, written for a GPU thread:
// four scalars rather than a std::array, and each round's high halves from
// __umulhi on the device (nvcc turned the 64-bit products into several
// 64-bit multiplications there); the top of a 64-bit product on a CPU. The
// same words either way (CudaFillElements.* compare the readers with the
// host's). The device readers below share it.
struct PhiloxWords {
  std::uint32_t x, y, z, w;
};

[[nodiscard]] ACCEL_HOST_DEVICE inline PhiloxWords philoxBlockWords(
    std::uint64_t seed, std::uint64_t block) noexcept {
  auto c0 = static_cast<std::uint32_t>(block);
  auto c1 = static_cast<std::uint32_t>(block >> 32);
  std::uint32_t c2 = 0;
  std::uint32_t c3 = 0;
  auto k0 = static_cast<std::uint32_t>(seed);
  auto k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < kPhiloxRounds; ++round) {
#if defined(__CUDA_ARCH__)
    const std::uint32_t high0 = __umulhi(kPhiloxMultiplier0, c0);
    const std::uint32_t high1 = __umulhi(kPhiloxMultiplier1, c2);
#else
    const auto high0 =
        static_cast<std::uint32_t>(std::uint64_t{kPhiloxMultiplier0} * c0 >> 32);
    const auto high1 =
        static_cast<std::uint32_t>(std::uint64_t{kPhiloxMultiplier1} * c2 >> 32);
#endif
    const std::uint32_t low0 = kPhiloxMultiplier0 * c0;
    const std::uint32_t low1 = kPhiloxMultiplier1 * c2;
    c0 = high1 ^ c1 ^ k0;
    c1 = low1;
    c2 = high0 ^ c3 ^ k1;
    c3 = low0;
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  return {c0, c1, c2, c3};
}

// The four outputs of one Philox block, read from the first: for a reader
// whose position is a multiple of 4 and that reads at most 4 outputs. A GPU
// thread keeps them in registers (the index is known where each is read).
// The CUDA fill kernel's fast path reads with it (backends/cuda/src/fill_mapping.h).
class PhiloxBlockReader {
 public:
  ACCEL_HOST_DEVICE PhiloxBlockReader(std::uint64_t seed,
                                      std::uint64_t position) noexcept {
    const PhiloxWords words = philoxBlockWords(seed, position / 4);
    words_[0] = words.x;
    words_[1] = words.y;
    words_[2] = words.z;
    words_[3] = words.w;
  }

  ACCEL_HOST_DEVICE std::uint32_t next() noexcept { return words_[next_++]; }

 private:
  std::uint32_t words_[4];
  int next_ = 0;
};

// The same outputs, one Philox block at a time, its four words picked
// without indexing an array at run time: a GPU thread keeps them in
// registers, where StreamReader's buffer, indexed at run time, lives in
// local memory (the thread's stack). The CUDA fill kernel reads with it.
class BlockStreamReader {
 public:
  ACCEL_HOST_DEVICE BlockStreamReader(std::uint64_t seed, std::uint64_t position) noexcept
      : seed_(seed), block_(position / 4), next_(static_cast<int>(position % 4)) {
    load();
  }

  ACCEL_HOST_DEVICE std::uint32_t next() noexcept {
    if (next_ == 4) [[unlikely]] {
      ++block_;
      load();
      next_ = 0;
    }
    const int at = next_++;
    return at == 0 ? words_.x : at == 1 ? words_.y : at == 2 ? words_.z : words_.w;
  }

 private:
  ACCEL_HOST_DEVICE void load() noexcept { words_ = philoxBlockWords(seed_, block_); }

  std::uint64_t seed_;
  std::uint64_t block_;
  int next_;
  PhiloxWords words_{};
};

// ---------------------------------------------------------------------------
// Mappings (docs/random.md).

ACCEL_HOST_DEVICE inline float logFloat(float u) noexcept {
  constexpr FloatNormalConstants c = floatNormalConstants();
  const auto bits = std::bit_cast<std::uint32_t>(u);
  const auto exponent = static_cast<std::int32_t>(bits >> 23) - 127;
  float m = std::bit_cast<float>((bits & 0x007FFFFFu) | 0x3F800000u);
  const bool big = m > c.sqrt2;
  if (big) m = m * 0.5f;
  const float e = static_cast<float>(exponent) + (big ? 1.0f : 0.0f);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float poly = c.log[3];
  for (int k = 2; k >= 0; --k) poly = c.log[k] + z * poly;
  poly = z * poly;
  const float twoS = s + s;
  const float logm = twoS + twoS * poly;
  return e * c.ln2 + logm;
}

ACCEL_HOST_DEVICE inline void normalFloatPair(std::uint32_t first, std::uint32_t second,
                                              float (&z)[2]) noexcept {
  constexpr FloatNormalConstants c = floatNormalConstants();
  const float u1 = static_cast<float>((first >> 8) + 1) * 0x1p-24f;
  const float radius = sqrtRounded(-2.0f * logFloat(u1));

  // The angle in quarter turns: quadrant q and a remainder r in [-1/2, 1/2),
  // all in exact integer arithmetic.
  const std::uint32_t turn = second >> 8;
  const std::uint32_t quadrant = (turn + (1u << 21)) >> 22;
  const auto reduced = static_cast<std::int32_t>(turn - (quadrant << 22));
  const float r = static_cast<float>(reduced) * 0x1p-22f;
  const float rr = r * r;
  float sinPoly = c.sin[4];
  for (int k = 3; k >= 0; --k) sinPoly = c.sin[k] + rr * sinPoly;
  const float sinR = r * sinPoly;
  float cosPoly = c.cos[4];
  for (int k = 3; k >= 0; --k) cosPoly = c.cos[k] + rr * cosPoly;
  const float cosR = 1.0f + rr * cosPoly;

  const bool swap = (quadrant & 1) != 0;
  const std::uint32_t sinSign = (quadrant & 2) << 30;
  const std::uint32_t cosSign = ((quadrant + 1) & 2) << 30;
  const float sinT =
      std::bit_cast<float>(std::bit_cast<std::uint32_t>(swap ? cosR : sinR) ^ sinSign);
  const float cosT =
      std::bit_cast<float>(std::bit_cast<std::uint32_t>(swap ? sinR : cosR) ^ cosSign);
  z[0] = radius * cosT;
  z[1] = radius * sinT;
}

ACCEL_HOST_DEVICE inline double logDouble(double u) noexcept {
  constexpr DoubleNormalConstants c = doubleNormalConstants();
  const auto bits = std::bit_cast<std::uint64_t>(u);
  const auto exponent = static_cast<std::int64_t>(bits >> 52) - 1023;
  double m =
      std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const bool big = m > c.sqrt2;
  if (big) m = m * 0.5;
  const double e = static_cast<double>(exponent) + (big ? 1.0 : 0.0);
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double poly = c.log[10];
  for (int k = 9; k >= 0; --k) poly = c.log[k] + z * poly;
  poly = z * poly;
  const double twoS = s + s;
  const double logm = twoS + twoS * poly;
  return e * c.ln2 + logm;
}

ACCEL_HOST_DEVICE inline void normalDoublePair(std::uint64_t first, std::uint64_t second,
                                               double (&z)[2]) noexcept {
  constexpr DoubleNormalConstants c = doubleNormalConstants();
  const double u1 = static_cast<double>((first >> 11) + 1) * 0x1p-53;
  const double radius = sqrtRounded(-2.0 * logDouble(u1));

  const std::uint64_t turn = second >> 11;
  const std::uint64_t quadrant = (turn + (1ull << 50)) >> 51;
  const auto reduced = static_cast<std::int64_t>(turn - (quadrant << 51));
  const double r = static_cast<double>(reduced) * 0x1p-51;
  const double rr = r * r;
  double sinPoly = c.sin[8];
  for (int k = 7; k >= 0; --k) sinPoly = c.sin[k] + rr * sinPoly;
  const double sinR = r * sinPoly;
  double cosPoly = c.cos[8];
  for (int k = 7; k >= 0; --k) cosPoly = c.cos[k] + rr * cosPoly;
  const double cosR = 1.0 + rr * cosPoly;

  const bool swap = (quadrant & 1) != 0;
  const std::uint64_t sinSign = (quadrant & 2) << 62;
  const std::uint64_t cosSign = ((quadrant + 1) & 2) << 62;
  const double sinT =
      std::bit_cast<double>(std::bit_cast<std::uint64_t>(swap ? cosR : sinR) ^ sinSign);
  const double cosT =
      std::bit_cast<double>(std::bit_cast<std::uint64_t>(swap ? sinR : cosR) ^ cosSign);
  z[0] = radius * cosT;
  z[1] = radius * sinT;
}

// ---------------------------------------------------------------------------
// The fill itself.

// Bytes of one element of `job`'s output.
[[nodiscard]] ACCEL_HOST_DEVICE constexpr std::size_t fillElementBytes(
    const FillJob& job) noexcept {
  if (job.output == FillOutput::Byte) return 1;
  if (job.output == FillOutput::Float) return sizeof(float);
  switch (job.kind) {
    case FillKind::Uint64:
    case FillKind::UniformDouble:
    case FillKind::NormalDouble:
      return 8;
    default:
      return 4;
  }
}

// Computes elements [first, first + count) of `job` (first + count <=
// job.count; `first` even for normal fills, which draw whole pairs) and
// writes element first + j to dest[j] (dest: count elements of the job's
// type; job.out is not used). A kernel stages elements with it before
// storing them in another order. Never throws.
// `Reader` reads the stream: StreamReader (the host's) or BlockStreamReader
// (a GPU's), the same numbers either way.
template <typename Reader = StreamReader>
ACCEL_HOST_DEVICE inline void fillElementsInto(const FillJob& job, std::size_t first,
                                               std::size_t count, void* dest) noexcept {
  Reader in(job.seed, job.offset + fillOutputs(job.kind, first));
  switch (job.kind) {
    case FillKind::Uint32: {
      auto* out = static_cast<std::uint32_t*>(dest);
      for (std::size_t i = 0; i < count; ++i) out[i] = in.next();
      return;
    }
    case FillKind::Uint64: {
      auto* out = static_cast<std::uint64_t*>(dest);
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t low = in.next();
        out[i] = joinWords(low, in.next());
      }
      return;
    }
    case FillKind::UniformFloat: {
      auto* out = static_cast<float*>(dest);
      const auto low = static_cast<float>(job.low);
      const auto range = static_cast<float>(job.range);
      const auto belowHigh = static_cast<float>(job.belowHigh);
      for (std::size_t i = 0; i < count; ++i) {
        const float u = uniformFloatFromBits(in.next());
        out[i] = job.ranged ? minFloat(u * range + low, belowHigh) : u;
      }
      return;
    }
    case FillKind::UniformDouble: {
      auto* out = static_cast<double*>(dest);
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t firstWord = in.next();
        const double u = uniformDoubleFromBits(firstWord, in.next());
        out[i] = job.ranged ? minDouble(u * job.range + job.low, job.belowHigh) : u;
      }
      return;
    }
    case FillKind::NormalFloat: {
      auto* out = static_cast<float*>(dest);
      const auto mean = static_cast<float>(job.mean);
      const auto stddev = static_cast<float>(job.stddev);
      for (std::size_t i = 0; i < count; i += 2) {
        const std::uint32_t firstWord = in.next();
        float z[2];
        normalFloatPair(firstWord, in.next(), z);
        out[i] = z[0] * stddev + mean;
        if (i + 1 < count) out[i + 1] = z[1] * stddev + mean;
      }
      return;
    }
    case FillKind::NormalDouble: {
      auto* out = static_cast<double*>(dest);
      for (std::size_t i = 0; i < count; i += 2) {
        const std::uint32_t w0 = in.next();
        const std::uint32_t w1 = in.next();
        const std::uint32_t w2 = in.next();
        const std::uint32_t w3 = in.next();
        double z[2];
        normalDoublePair(joinWords(w0, w1), joinWords(w2, w3), z);
        out[i] = z[0] * job.stddev + job.mean;
        if (i + 1 < count) out[i + 1] = z[1] * job.stddev + job.mean;
      }
      return;
    }
    case FillKind::Bernoulli: {
      for (std::size_t i = 0; i < count; ++i) {
        const bool hit = bernoulliFromBits(in.next(), job.threshold);
        if (job.output == FillOutput::Byte) {
          static_cast<std::uint8_t*>(dest)[i] = hit ? 1 : 0;
        } else {
          static_cast<float*>(dest)[i] = hit ? 1.0f : 0.0f;
        }
      }
      return;
    }
  }
}

// Writes elements [first, first + count) of `job` to job.out (first + count
// <= job.count; `first` even for normal fills). Never throws.
ACCEL_HOST_DEVICE inline void fillElements(const FillJob& job, std::size_t first,
                                           std::size_t count) noexcept {
  fillElementsInto(job, first, count,
                   static_cast<unsigned char*>(job.out) + first * fillElementBytes(job));
}

}  // namespace accel::detail
