#include "block_stats.h"

namespace accel::memory::detail {

std::int64_t BlockStats::current(const Pool& pool, Figure figure) noexcept {
  switch (figure) {
    case kAllocatedBytes:
      return pool.allocated_bytes.current();
    case kAllocations:
      return pool.allocations.current();
    case kRequestedBytes:
      return pool.requested_bytes.current();
    case kActiveBytes:
      return pool.allocated_bytes.current() + pool.pending_bytes;
    case kActive:
      return pool.allocations.current() + pool.pending;
    case kSplitBytes:
      return pool.split_bytes.current();
    case kSplit:
      return pool.split.current();
    case kFigures:
      break;
  }
  return 0;
}

std::int64_t BlockStats::increases(const Pool& pool, Figure figure) noexcept {
  switch (figure) {
    case kAllocatedBytes:
    case kActiveBytes:
      return pool.allocated_bytes.increases;
    case kAllocations:
    case kActive:
      return pool.allocations.increases;
    case kRequestedBytes:
      return pool.requested_bytes.increases;
    case kSplitBytes:
      return pool.split_bytes.increases;
    case kSplit:
      return pool.split.increases;
    case kFigures:
      break;
  }
  return 0;
}

void BlockStats::resetPeaks() noexcept {
  for (int f = 0; f < kFigures; ++f) {
    const auto figure = static_cast<Figure>(f);
    all_peak_[f] = 0;
    for (Pool& pool : pools_) {
      pool.peak[f] = current(pool, figure);
      all_peak_[f] += pool.peak[f];
    }
  }
}

void BlockStats::writeTo(MemoryStats& out) const noexcept {
  static constexpr PooledStat MemoryStats::*kTargets[kFigures] = {
      &MemoryStats::allocated_bytes, &MemoryStats::allocations,
      &MemoryStats::requested_bytes, &MemoryStats::active_bytes,
      &MemoryStats::active,          &MemoryStats::inactive_split_bytes,
      &MemoryStats::inactive_split};
  for (int f = 0; f < kFigures; ++f) {
    const auto figure = static_cast<Figure>(f);
    PooledStat& stat = out.*kTargets[f];
    Stat* const per_pool[2] = {&stat.large_pool, &stat.small_pool};
    Stat all;
    for (int p = 0; p < 2; ++p) {
      Stat& target = *per_pool[p];
      target.current = current(pools_[p], figure);
      target.allocated = increases(pools_[p], figure);
      target.freed = target.allocated - target.current;
      target.peak = pools_[p].peak[f];
      all.current += target.current;
      all.allocated += target.allocated;
      all.freed += target.freed;
    }
    all.peak = all_peak_[f];
    static_cast<Stat&>(stat) = all;
  }
}

}  // namespace accel::memory::detail
