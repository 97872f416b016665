// Philox4x32-10: the counter-based random engine behind every accelhooks
// generator, and the stream layout that every backend shares.
//
// Philox (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11)
// maps a 128-bit counter and a 64-bit key to 128 random bits with no hidden
// state, so any output of a stream can be computed directly from its position:
// a host thread, a SIMD lane and a device kernel all produce the same numbers
// for the same (seed, position). philox4x32() follows Random123 exactly and is
// checked against its published known-answer vectors.
//
// Stream layout (the one cuRAND uses): the n-th 32-bit output of the stream
// (seed, subsequence) is word n % 4 of
//     philox4x32(counter = {lo(n / 4), hi(n / 4), lo(subsequence), hi(subsequence)},
//                key     = {lo(seed), hi(seed)}).
// accelhooks generators and fills use subsequence 0; a generator's offset is n.
// See docs/random.md.
//
// Thread-safety: pure functions of their arguments; safe from any thread.
// Everything here is constexpr, so it can also run in constant expressions,
// and ACCEL_HOST_DEVICE: nvcc compiles the very same functions for CUDA
// devices (with --expt-relaxed-constexpr, for std::array's accessors).
#pragma once

#include <array>
#include <cstdint>

#include "accel/host_device.h"

namespace accel {

// Random123's Philox4x32 round multipliers and key schedule (Weyl) constants.
inline constexpr std::uint32_t kPhiloxMultiplier0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxMultiplier1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxWeyl0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxWeyl1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// Where a fill or a kernel starts drawing: the stream of `seed` (subsequence 0),
// from its `offset`-th 32-bit output. PhiloxGenerator::reserve hands these out.
struct PhiloxPosition {
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;

  friend constexpr bool operator==(const PhiloxPosition&,
                                   const PhiloxPosition&) = default;
};

// Philox4x32 with 10 rounds, bit-exact with Random123's philox4x32_R(10, ...).
// Never throws.
[[nodiscard]] ACCEL_HOST_DEVICE constexpr PhiloxCounter philox4x32(
    PhiloxCounter counter, PhiloxKey key) noexcept {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      key[0] += kPhiloxWeyl0;
      key[1] += kPhiloxWeyl1;
    }
    const std::uint64_t product0 =
        static_cast<std::uint64_t>(kPhiloxMultiplier0) * counter[0];
    const std::uint64_t product1 =
        static_cast<std::uint64_t>(kPhiloxMultiplier1) * counter[2];
    const auto hi0 = static_cast<std::uint32_t>(product0 >> 32);
    const auto lo0 = static_cast<std::uint32_t>(product0);
    const auto hi1 = static_cast<std::uint32_t>(product1 >> 32);
    const auto lo1 = static_cast<std::uint32_t>(product1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
  }
  return counter;
}

// The four outputs n = 4 * block .. 4 * block + 3 of stream (seed, subsequence).
// Never throws.
[[nodiscard]] ACCEL_HOST_DEVICE constexpr PhiloxCounter philoxBlock(
    std::uint64_t seed, std::uint64_t subsequence, std::uint64_t block) noexcept {
  return philox4x32(
      {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
       static_cast<std::uint32_t>(subsequence),
       static_cast<std::uint32_t>(subsequence >> 32)},
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

// The n-th 32-bit output of stream (seed, subsequence). Never throws.
[[nodiscard]] ACCEL_HOST_DEVICE constexpr std::uint32_t philoxOutput(
    std::uint64_t seed, std::uint64_t subsequence, std::uint64_t n) noexcept {
  return philoxBlock(seed, subsequence, n / 4)[n % 4];
}

}  // namespace accel
