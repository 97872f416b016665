// The size rules of the caching allocator, as pure functions.
//
// A request is rounded to the 512-byte quantum (or, when power-of-two
// divisions are set for its size class, to the next of N equal steps between
// two powers of two); a rounded size of at most 1 MiB is "small" and is carved
// out of 2 MiB segments, anything larger out of 20 MiB segments (up to 10 MiB)
// or out of its own segment rounded up to 2 MiB. The quantum (kUniformMax)
// has, in the device's default pools, a pool of its own (the "uniform pool":
// every block handed out there has that one size, so no pattern of frees can
// leave its free space in pieces too small to serve). A cached block is split
// when the rest is worth keeping: at least 512 bytes in the small pool, more than
// 1 MiB in the large pool. The allocator (caching_allocator.h) calls these and
// nothing else decides sizes, so the tests pin the rules down here.
//
// Thread-safety: pure functions (constexpr, inline: the allocator calls them on
// every allocation).
#pragma once

#include <bit>
#include <cstddef>

namespace accel::memory {

inline constexpr std::size_t kMinBlockSize = 512;        // the quantum
inline constexpr std::size_t kSmallSize = 1 << 20;       // small-pool limit
inline constexpr std::size_t kSmallBuffer = 2 << 20;     // small segments
inline constexpr std::size_t kLargeBuffer = 20 << 20;    // mid-size segments
inline constexpr std::size_t kMinLargeAlloc = 10 << 20;  // own segment above
inline constexpr std::size_t kRoundLarge = 2 << 20;      // own-segment step
inline constexpr std::size_t kUniformMax = 512;          // the uniform pool's size
// The largest request the allocators serve (4 EiB, beyond any device): the
// rules below never wrap for a request up to it (roundSize at most doubles a
// size, segmentSize adds less than kRoundLarge). A larger request is
// OutOfMemory before any rule is applied.
inline constexpr std::size_t kMaxRequest = std::size_t{1} << 62;

namespace detail {
constexpr std::size_t roundUpTo(std::size_t value, std::size_t step) noexcept {
  return (value + step - 1) / step * step;
}
}  // namespace detail

// Rounds a request. divisions == 0 or 1: the 512 B quantum; divisions == N
// (a power of two): sizes above 512 B go to the next of N steps between the
// powers of two around them (PyTorch's roundup_power2_divisions). 0 bytes
// round to 512 (every block has an address of its own).
[[nodiscard]] constexpr std::size_t roundSize(std::size_t bytes,
                                              std::size_t divisions = 0) noexcept {
  if (bytes <= kMinBlockSize) return kMinBlockSize;
  if (divisions > 1) {
    // Steps between the power of two below and the one above: 1 GiB with 4
    // divisions gives 1, 1.25, 1.5, 1.75, 2 GiB. Below 4 * step the steps
    // would be finer than the quantum, so the quantum wins.
    const std::size_t floor_pow2 = std::bit_floor(bytes);
    if (floor_pow2 == bytes) return bytes;
    const std::size_t step = floor_pow2 / divisions;
    if (step >= kMinBlockSize) return detail::roundUpTo(bytes, step);
  }
  return detail::roundUpTo(bytes, kMinBlockSize);
}
// True when a rounded size belongs to the small pool.
[[nodiscard]] constexpr bool isSmallSize(std::size_t rounded) noexcept {
  return rounded <= kSmallSize;
}
// True when a rounded size has the uniform pool (in the default pools): the
// quantum only (kUniformMax == kMinBlockSize; a 1 KiB pool crept, see
// docs/design-notes.md "A uniform pool for the quantum").
static_assert(kUniformMax == kMinBlockSize, "the uniform pool is the quantum's");
[[nodiscard]] constexpr bool isUniformSize(std::size_t rounded) noexcept {
  return rounded <= kUniformMax;
}
// The segment size requested from the device for a rounded size
// (rounded <= roundSize(kMaxRequest, any): larger sizes would wrap).
[[nodiscard]] constexpr std::size_t segmentSize(std::size_t rounded) noexcept {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return detail::roundUpTo(rounded, kRoundLarge);
}
// Whether a free block of block_size serving a request of rounded bytes is
// split (true) or handed out whole (false). Oversize requests (>= a non-zero
// max_split_size) are never split off a large block; in an expandable segment
// any whole quantum left over is kept, as the segment has no fixed shape.
[[nodiscard]] constexpr bool shouldSplit(std::size_t block_size, std::size_t rounded,
                                         bool small_pool, std::size_t max_split_size = 0,
                                         bool expandable = false) noexcept {
  const std::size_t rest = block_size - rounded;
  if (small_pool || expandable) return rest >= kMinBlockSize;
  if (max_split_size != 0 && rounded >= max_split_size) return false;
  return rest > kSmallSize;
}
// Whether a cached block of block_size may serve a request of rounded bytes
// under max_split_size (0: unlimited): an oversize block (>= max_split_size)
// serves only oversize requests, and only when it wastes at most kLargeBuffer.
[[nodiscard]] constexpr bool mayServe(std::size_t block_size, std::size_t rounded,
                                      std::size_t max_split_size) noexcept {
  if (block_size < rounded) return false;
  if (max_split_size == 0) return true;
  if (rounded < max_split_size) return block_size < max_split_size;
  return block_size - rounded <= kLargeBuffer;
}

}  // namespace accel::memory
