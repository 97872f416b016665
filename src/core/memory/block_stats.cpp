#include "memory/block_stats.h"

#include <algorithm>

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

void BlockStats::raisePeaks(bool small) noexcept {
  Pool& pool = pools_[small];
  const Pool& other = pools_[!small];
  for (const Figure figure :
       {kAllocatedBytes, kAllocations, kRequestedBytes, kActiveBytes, kActive}) {
    raise(pool, other, figure, current(pool, figure), current(other, figure));
  }
  measureRooms();
}

void BlockStats::measureRooms() noexcept {
  const auto room = [](const std::int64_t* peak, auto current_of) {
    return Room{std::min(peak[kAllocatedBytes] - current_of(kAllocatedBytes),
                         peak[kActiveBytes] - current_of(kActiveBytes)),
                peak[kRequestedBytes] - current_of(kRequestedBytes),
                std::min(peak[kAllocations] - current_of(kAllocations),
                         peak[kActive] - current_of(kActive))};
  };
  for (int p = 0; p < 2; ++p) {
    room_[p] = room(pools_[p].peak, [&](Figure f) { return current(pools_[p], f); });
  }
  all_room_ = room(
      all_peak_, [&](Figure f) { return current(pools_[0], f) + current(pools_[1], f); });
}

void BlockStats::raiseSplitPeaks(bool small) noexcept {
  const auto close = [](std::int64_t& room, std::int64_t& peak) {
    if (room < 0) {
      peak -= room;  // room = peak - current
      room = 0;
    }
  };
  Pool& pool = pools_[small];
  close(split_room_[small].bytes, pool.peak[kSplitBytes]);
  close(split_room_[small].count, pool.peak[kSplit]);
  close(all_split_room_.bytes, all_peak_[kSplitBytes]);
  close(all_split_room_.count, all_peak_[kSplit]);
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
  measureRooms();
  for (SplitRoom& room : split_room_) room = {};
  all_split_room_ = {};
}

void BlockStats::resetAccumulated() noexcept {
  for (int p = 0; p < 2; ++p) {
    for (int f = 0; f < kFigures; ++f) {
      const auto figure = static_cast<Figure>(f);
      increases_at_reset_[p][f] = increases(pools_[p], figure);
      decreases_at_reset_[p][f] =
          increases(pools_[p], figure) - current(pools_[p], figure);
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
      const std::int64_t total_increases = increases(pools_[p], figure);
      target.allocated = total_increases - increases_at_reset_[p][f];
      target.freed = total_increases - target.current - decreases_at_reset_[p][f];
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
