// Private to random_fill_avx2.cpp and random_fill_avx512.cpp: the SIMD fill,
// written once over an ISA type V (Avx2 or Avx512, defined by the includer)
// and compiled once per ISA with that file's -m flags.
//
// Everything here has internal linkage on purpose: an inline function with
// external linkage compiled for AVX-512 in one file and for AVX2 in another
// would be merged by the linker, and the AVX2 path could end up running
// AVX-512 code. For the same reason this code calls no inline function from
// other headers.
//
// The algorithm mirrors fillScalar in random_fill.cpp operation for
// operation (same order, no fused multiply-add; the files are compiled with
// -ffp-contract=off), which is what makes the paths bit-identical.
//
// V provides, over vectors of kLanes 32-bit lanes (I, F) or kLanes / 2
// 64-bit lanes (I, D): loads, stores, integer and floating arithmetic, masks
// (MF, MD) with selects, the in-128-bit-lane shuffles used for (de)interleaving,
// and the Philox pieces mulhilo and transposeStore.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "random/random_fill_kernels.h"

namespace accel::detail {
namespace {

// Outputs generated per chunk: 8 KiB of stream stays in L1 between the Philox
// pass and the mapping pass.
constexpr std::size_t kChunkOutputs = 2048;

template <class V>
struct Simd {
  using I = typename V::I;
  using F = typename V::F;
  using D = typename V::D;
  static constexpr std::size_t kLanes = V::kLanes;
  // One philoxGroup call: two independent sets of kLanes blocks (the second
  // hides the multiplier latency of the first).
  static constexpr std::size_t kGroupOutputs = 8 * kLanes;

  struct RoundKeys {
    I k0[kPhiloxRounds];
    I k1[kPhiloxRounds];
  };

  static RoundKeys roundKeys(std::uint64_t seed) {
    RoundKeys keys;
    auto k0 = static_cast<std::uint32_t>(seed);
    auto k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int r = 0; r < kPhiloxRounds; ++r) {
      keys.k0[r] = V::set1(k0);
      keys.k1[r] = V::set1(k1);
      k0 += kPhiloxWeyl0;
      k1 += kPhiloxWeyl1;
    }
    return keys;
  }

  // Counter words 0 and 1 (lo and hi of the block index) for kLanes blocks from
  // `first`, lane i holding block first + V::kBlockOfLane[i], the order that
  // makes transposeStore's in-lane transpose write outputs contiguously.
  static void counters(std::uint64_t first, I& lo, I& hi) {
    if (static_cast<std::uint32_t>(first) <= 0xFFFFFFFFu - (kLanes - 1)) {
      lo = V::add32(V::set1(static_cast<std::uint32_t>(first)), V::blockOfLane());
      hi = V::set1(static_cast<std::uint32_t>(first >> 32));
      return;
    }
    // The low word wraps inside this vector: once per 2^34 outputs.
    alignas(64) std::uint32_t loWords[kLanes];
    alignas(64) std::uint32_t hiWords[kLanes];
    for (std::size_t i = 0; i < kLanes; ++i) {
      const std::uint64_t block = first + V::kBlockOfLane[i];
      loWords[i] = static_cast<std::uint32_t>(block);
      hiWords[i] = static_cast<std::uint32_t>(block >> 32);
    }
    lo = V::loadu(loWords);
    hi = V::loadu(hiWords);
  }

  static void round(I& c0, I& c1, I& c2, I& c3, I k0, I k1, I m0, I m1) {
    I hi0, lo0, hi1, lo1;
    V::mulhilo(c0, m0, hi0, lo0);
    V::mulhilo(c2, m1, hi1, lo1);
    c0 = V::xor3(hi1, c1, k0);
    c1 = lo1;
    c2 = V::xor3(hi0, c3, k1);
    c3 = lo0;
  }

  // The first round of subsequence 0, where counter words 2 and 3 are zero
  // (so the second product is zero too): round() with the dead work left out.
  static void firstRound(I& c0, I& c1, I& c2, I& c3, I k0, I k1, I m0) {
    I hi0, lo0;
    V::mulhilo(c0, m0, hi0, lo0);
    c0 = V::bxor(c1, k0);
    c1 = V::zero();
    c2 = V::bxor(hi0, k1);
    c3 = lo0;
  }

  // Writes the 8 * kLanes outputs of blocks [block, block + 2 * kLanes).
  static void philoxGroup(const RoundKeys& keys, std::uint64_t block,
                          std::uint32_t* dst) {
    const I m0 = V::set1(kPhiloxMultiplier0);
    const I m1 = V::set1(kPhiloxMultiplier1);
    I a0, a1, b0, b1;
    counters(block, a0, a1);
    counters(block + kLanes, b0, b1);
    I a2, a3, b2, b3;
    firstRound(a0, a1, a2, a3, keys.k0[0], keys.k1[0], m0);
    firstRound(b0, b1, b2, b3, keys.k0[0], keys.k1[0], m0);
    for (int r = 1; r < kPhiloxRounds; ++r) {
      round(a0, a1, a2, a3, keys.k0[r], keys.k1[r], m0, m1);
      round(b0, b1, b2, b3, keys.k0[r], keys.k1[r], m0, m1);
    }
    V::transposeStore(a0, a1, a2, a3, dst);
    V::transposeStore(b0, b1, b2, b3, dst + 4 * kLanes);
  }

  // --- float mappings -----------------------------------------------------

  static F uniformFloat(I bits) {
    return V::mulF(V::cvtF(V::template srli32<8>(bits)), V::set1F(0x1p-24f));
  }

  static F logFloat(F u) {
    using namespace fconst;
    const I bits = V::castFI(u);
    const I exponent = V::sub32(V::template srli32<23>(bits), V::set1(127));
    F m = V::castIF(V::bor(V::band(bits, V::set1(0x007FFFFFu)), V::set1(0x3F800000u)));
    const auto big = V::gtF(m, V::set1F(kSqrt2));
    m = V::selectF(big, m, V::mulF(m, V::set1F(0.5f)));
    const F e =
        V::addF(V::cvtF(exponent), V::selectF(big, V::set1F(0.0f), V::set1F(1.0f)));
    const F f = V::subF(m, V::set1F(1.0f));
    const F s = V::divF(f, V::addF(V::set1F(2.0f), f));
    const F z = V::mulF(s, s);
    F poly = V::set1F(kLog[3]);
    poly = V::addF(V::set1F(kLog[2]), V::mulF(z, poly));
    poly = V::addF(V::set1F(kLog[1]), V::mulF(z, poly));
    poly = V::addF(V::set1F(kLog[0]), V::mulF(z, poly));
    poly = V::mulF(z, poly);
    const F twoS = V::addF(s, s);
    const F logm = V::addF(twoS, V::mulF(twoS, poly));
    return V::addF(V::mulF(e, V::set1F(kLn2)), logm);
  }

  // {z0, z1} of the pairs whose outputs are `first` and `second`.
  static void normalFloat(I first, I second, F& z0, F& z1) {
    using namespace fconst;
    const F u1 = V::mulF(V::cvtF(V::add32(V::template srli32<8>(first), V::set1(1))),
                         V::set1F(0x1p-24f));
    const F radius = V::sqrtF(V::mulF(V::set1F(-2.0f), logFloat(u1)));

    const I turn = V::template srli32<8>(second);
    const I quadrant = V::template srli32<22>(V::add32(turn, V::set1(1u << 21)));
    const I reduced = V::sub32(turn, V::template slli32<22>(quadrant));
    const F r = V::mulF(V::cvtF(reduced), V::set1F(0x1p-22f));
    const F z = V::mulF(r, r);
    F sinPoly = V::set1F(kSin[4]);
    for (int k = 3; k >= 0; --k)
      sinPoly = V::addF(V::set1F(kSin[k]), V::mulF(z, sinPoly));
    const F sinR = V::mulF(r, sinPoly);
    F cosPoly = V::set1F(kCos[4]);
    for (int k = 3; k >= 0; --k)
      cosPoly = V::addF(V::set1F(kCos[k]), V::mulF(z, cosPoly));
    const F cosR = V::addF(V::set1F(1.0f), V::mulF(z, cosPoly));

    const auto swap = V::oddF(quadrant);
    const I sinSign = V::template slli32<30>(V::band(quadrant, V::set1(2)));
    const I cosSign =
        V::template slli32<30>(V::band(V::add32(quadrant, V::set1(1)), V::set1(2)));
    const F sinT = V::castIF(V::bxor(V::castFI(V::selectF(swap, sinR, cosR)), sinSign));
    const F cosT = V::castIF(V::bxor(V::castFI(V::selectF(swap, cosR, sinR)), cosSign));
    z0 = V::mulF(radius, cosT);
    z1 = V::mulF(radius, sinT);
  }

  // --- double mappings ----------------------------------------------------

  // An integer below 2^54 in each 64-bit lane, converted exactly.
  static D exactDouble(I value) {
    const I magic = V::set1_64(0x4330000000000000ull);  // 2^52
    const D two52 = V::set1D(0x1p52);
    const D hi = V::subD(V::castID(V::bor(V::template srli64<32>(value), magic)), two52);
    const D lo = V::subD(
        V::castID(V::bor(V::band(value, V::set1_64(0xFFFFFFFFull)), magic)), two52);
    return V::addD(V::mulD(hi, V::set1D(0x1p32)), lo);
  }

  // A signed integer of magnitude below 2^51 in each 64-bit lane, exactly.
  static D exactSignedDouble(I value) {
    const D shift = V::set1D(0x1.8p52);
    return V::subD(V::castID(V::add64(value, V::castDI(shift))), shift);
  }

  static D uniformDouble(I words) {
    return V::mulD(exactDouble(V::template srli64<11>(words)), V::set1D(0x1p-53));
  }

  static D logDouble(D u) {
    using namespace dconst;
    const I bits = V::castDI(u);
    D e = V::subD(V::castID(V::bor(V::template srli64<52>(bits),
                                   V::set1_64(0x4330000000000000ull))),
                  V::set1D(0x1p52 + 1023.0));
    D m = V::castID(V::bor(V::band(bits, V::set1_64(0x000FFFFFFFFFFFFFull)),
                           V::set1_64(0x3FF0000000000000ull)));
    const auto big = V::gtD(m, V::set1D(kSqrt2));
    m = V::selectD(big, m, V::mulD(m, V::set1D(0.5)));
    e = V::addD(e, V::selectD(big, V::set1D(0.0), V::set1D(1.0)));
    const D f = V::subD(m, V::set1D(1.0));
    const D s = V::divD(f, V::addD(V::set1D(2.0), f));
    const D z = V::mulD(s, s);
    D poly = V::set1D(kLog[10]);
    for (int k = 9; k >= 0; --k) poly = V::addD(V::set1D(kLog[k]), V::mulD(z, poly));
    poly = V::mulD(z, poly);
    const D twoS = V::addD(s, s);
    const D logm = V::addD(twoS, V::mulD(twoS, poly));
    return V::addD(V::mulD(e, V::set1D(kLn2)), logm);
  }

  static void normalDouble(I first, I second, D& z0, D& z1) {
    using namespace dconst;
    const D u1 =
        V::mulD(exactDouble(V::add64(V::template srli64<11>(first), V::set1_64(1))),
                V::set1D(0x1p-53));
    const D radius = V::sqrtD(V::mulD(V::set1D(-2.0), logDouble(u1)));

    const I turn = V::template srli64<11>(second);
    const I quadrant = V::template srli64<51>(V::add64(turn, V::set1_64(1ull << 50)));
    const I reduced = V::sub64(turn, V::template slli64<51>(quadrant));
    const D r = V::mulD(exactSignedDouble(reduced), V::set1D(0x1p-51));
    const D z = V::mulD(r, r);
    D sinPoly = V::set1D(kSin[8]);
    for (int k = 7; k >= 0; --k)
      sinPoly = V::addD(V::set1D(kSin[k]), V::mulD(z, sinPoly));
    const D sinR = V::mulD(r, sinPoly);
    D cosPoly = V::set1D(kCos[8]);
    for (int k = 7; k >= 0; --k)
      cosPoly = V::addD(V::set1D(kCos[k]), V::mulD(z, cosPoly));
    const D cosR = V::addD(V::set1D(1.0), V::mulD(z, cosPoly));

    const auto swap = V::oddD(quadrant);
    const I sinSign = V::template slli64<62>(V::band(quadrant, V::set1_64(2)));
    const I cosSign =
        V::template slli64<62>(V::band(V::add64(quadrant, V::set1_64(1)), V::set1_64(2)));
    const D sinT = V::castID(V::bxor(V::castDI(V::selectD(swap, sinR, cosR)), sinSign));
    const D cosT = V::castID(V::bxor(V::castDI(V::selectD(swap, cosR, sinR)), cosSign));
    z0 = V::mulD(radius, cosT);
    z1 = V::mulD(radius, sinT);
  }

  // --- chunk mappings: `count` elements from the outputs at `src` ---------
  // `count` is a multiple of the kind's step (stepOf).

  static std::size_t stepOf(FillKind kind) {
    switch (kind) {
      case FillKind::Uint64:
      case FillKind::UniformDouble:
        return kLanes / 2;
      case FillKind::NormalFloat:
        return 2 * kLanes;
      default:
        return kLanes;
    }
  }

  static std::size_t outputsPerElement(FillKind kind) {
    switch (kind) {
      case FillKind::Uint64:
      case FillKind::UniformDouble:
      case FillKind::NormalDouble:
        return 2;
      default:
        return 1;
    }
  }

  static void mapChunk(const FillJob& job, const std::uint32_t* src, std::size_t first,
                       std::size_t count) {
    switch (job.kind) {
      case FillKind::Uint32:
        std::memcpy(static_cast<std::uint32_t*>(job.out) + first, src, count * 4);
        return;
      case FillKind::Uint64:
        // Little-endian: element i = out[2i] | out[2i+1] << 32 is the memory image.
        std::memcpy(static_cast<std::uint64_t*>(job.out) + first, src, count * 8);
        return;
      case FillKind::UniformFloat: {
        float* out = static_cast<float*>(job.out) + first;
        if (!job.ranged) {
          for (std::size_t i = 0; i < count; i += kLanes) {
            V::storeF(out + i, uniformFloat(V::loadu(src + i)));
          }
          return;
        }
        const F low = V::set1F(static_cast<float>(job.low));
        const F range = V::set1F(static_cast<float>(job.range));
        const F belowHigh = V::set1F(static_cast<float>(job.belowHigh));
        for (std::size_t i = 0; i < count; i += kLanes) {
          const F u = uniformFloat(V::loadu(src + i));
          V::storeF(out + i, V::minF(V::addF(V::mulF(u, range), low), belowHigh));
        }
        return;
      }
      case FillKind::UniformDouble: {
        double* out = static_cast<double*>(job.out) + first;
        const D low = V::set1D(job.low);
        const D range = V::set1D(job.range);
        const D belowHigh = V::set1D(job.belowHigh);
        for (std::size_t i = 0; i < count; i += kLanes / 2) {
          const D u = uniformDouble(V::loadu(src + 2 * i));
          V::storeD(out + i,
                    job.ranged ? V::minD(V::addD(V::mulD(u, range), low), belowHigh) : u);
        }
        return;
      }
      case FillKind::NormalFloat: {
        float* out = static_cast<float*>(job.out) + first;
        const F mean = V::set1F(static_cast<float>(job.mean));
        const F stddev = V::set1F(static_cast<float>(job.stddev));
        for (std::size_t i = 0; i < count; i += 2 * kLanes) {
          const I a = V::loadu(src + i);
          const I b = V::loadu(src + i + kLanes);
          F z0, z1;
          normalFloat(V::evens32(a, b), V::odds32(a, b), z0, z1);
          const F x0 = V::addF(V::mulF(z0, stddev), mean);
          const F x1 = V::addF(V::mulF(z1, stddev), mean);
          V::storeF(out + i, V::unpackloF(x0, x1));
          V::storeF(out + i + kLanes, V::unpackhiF(x0, x1));
        }
        return;
      }
      case FillKind::NormalDouble: {
        double* out = static_cast<double*>(job.out) + first;
        const D mean = V::set1D(job.mean);
        const D stddev = V::set1D(job.stddev);
        for (std::size_t i = 0; i < count; i += kLanes) {
          const I a = V::loadu(src + 2 * i);
          const I b = V::loadu(src + 2 * i + kLanes);
          D z0, z1;
          normalDouble(V::unpacklo64(a, b), V::unpackhi64(a, b), z0, z1);
          const D x0 = V::addD(V::mulD(z0, stddev), mean);
          const D x1 = V::addD(V::mulD(z1, stddev), mean);
          V::storeD(out + i, V::unpackloD(x0, x1));
          V::storeD(out + i + kLanes / 2, V::unpackhiD(x0, x1));
        }
        return;
      }
      case FillKind::Bernoulli: {
        const bool always = job.threshold > 0xFFFFFFFFull;
        const I threshold = V::set1(static_cast<std::uint32_t>(job.threshold));
        for (std::size_t i = 0; i < count; i += kLanes) {
          const I hit =
              always ? V::set1(0xFFFFFFFFu) : V::lessU32(V::loadu(src + i), threshold);
          if (job.output == FillOutput::Byte) {
            V::storeBytes01(static_cast<std::uint8_t*>(job.out) + first + i, hit);
          } else {
            V::storeF(static_cast<float*>(job.out) + first + i,
                      V::castIF(V::band(hit, V::set1(0x3F800000u))));
          }
        }
        return;
      }
    }
  }

  static void fill(const FillJob& job) {
    const std::size_t step = stepOf(job.kind);
    const std::size_t perElement = outputsPerElement(job.kind);
    const std::size_t vectorCount = job.count - job.count % step;
    if (vectorCount > 0) {
      const RoundKeys keys = roundKeys(job.seed);
      // Room for the up-to-3-output misalignment and the last partial group.
      alignas(64) std::uint32_t buffer[kChunkOutputs + kGroupOutputs];
      const std::size_t chunkElements = kChunkOutputs / (perElement * step) * step;
      for (std::size_t done = 0; done < vectorCount;) {
        const std::size_t count =
            vectorCount - done < chunkElements ? vectorCount - done : chunkElements;
        const std::uint64_t position = job.offset + done * perElement;
        const std::uint64_t block = position / 4;
        const std::size_t skip = static_cast<std::size_t>(position % 4);
        const std::size_t needed = skip + count * perElement;
        for (std::size_t o = 0; o < needed; o += kGroupOutputs) {
          philoxGroup(keys, block + o / 4, buffer + o);
        }
        mapChunk(job, buffer + skip, done, count);
        done += count;
      }
    }
    if (vectorCount < job.count) {
      fillScalar(sliceFillJob(job, vectorCount, job.count - vectorCount));
    }
  }
};

}  // namespace
}  // namespace accel::detail
