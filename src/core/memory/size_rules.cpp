#include "accel/memory/size_rules.h"

#include <bit>

namespace accel::memory {
namespace {

constexpr std::size_t roundUp(std::size_t value, std::size_t step) noexcept {
  return (value + step - 1) / step * step;
}

}  // namespace

std::size_t roundSize(std::size_t bytes, std::size_t divisions) noexcept {
  if (bytes <= kMinBlockSize) return kMinBlockSize;
  if (divisions > 1) {
    // Steps between the power of two below and the one above: 1 GiB with 4
    // divisions gives 1, 1.25, 1.5, 1.75, 2 GiB. Below 4 * step the steps
    // would be finer than the quantum, so the quantum wins.
    const std::size_t floor_pow2 = std::bit_floor(bytes);
    if (floor_pow2 == bytes) return bytes;
    const std::size_t step = floor_pow2 / divisions;
    if (step >= kMinBlockSize) return roundUp(bytes, step);
  }
  return roundUp(bytes, kMinBlockSize);
}

std::size_t segmentSize(std::size_t rounded) noexcept {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return roundUp(rounded, kRoundLarge);
}

bool shouldSplit(std::size_t block_size, std::size_t rounded, bool small_pool,
                 std::size_t max_split_size, bool expandable) noexcept {
  const std::size_t rest = block_size - rounded;
  if (small_pool || expandable) return rest >= kMinBlockSize;
  if (max_split_size != 0 && rounded >= max_split_size) return false;
  return rest > kSmallSize;
}

bool mayServe(std::size_t block_size, std::size_t rounded,
              std::size_t max_split_size) noexcept {
  if (block_size < rounded) return false;
  if (max_split_size == 0) return true;
  if (rounded < max_split_size) return block_size < max_split_size;
  return block_size - rounded <= kLargeBuffer;
}

}  // namespace accel::memory
