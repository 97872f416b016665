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

void BlockStats::allocationFigures(const Pool& pool, Figures& out) noexcept {
  out[kAllocatedBytes] = pool.allocated_bytes.current();
  out[kAllocations] = pool.allocations.current();
  out[kRequestedBytes] = pool.requested_bytes.current();
  out[kActiveBytes] = out[kAllocatedBytes] + pool.pending_bytes;
  out[kActive] = out[kAllocations] + pool.pending;
}

BlockStats::Room BlockStats::roomBelow(const std::int64_t* peak,
                                       const Figures& current) noexcept {
  return Room{std::min(peak[kAllocatedBytes] - current[kAllocatedBytes],
                       peak[kActiveBytes] - current[kActiveBytes]),
              peak[kRequestedBytes] - current[kRequestedBytes],
              std::min(peak[kAllocations] - current[kAllocations],
                       peak[kActive] - current[kActive])};
}

// The figures are read once, for the peaks and then for the rooms: this
// runs whenever an allocation's room runs out (about 2 % of a training
// trace's allocations).
void BlockStats::raisePeaks(bool small) noexcept {
  Figures mine;
  Figures others;
  Figures all;
  allocationFigures(pools_[small], mine);
  allocationFigures(pools_[!small], others);
  std::int64_t* const peak = pools_[small].peak;
  for (int f = 0; f < kAllocationFigures; ++f) {
    all[f] = mine[f] + others[f];
    peak[f] = std::max(peak[f], mine[f]);
    all_peak_[f] = std::max(all_peak_[f], all[f]);
  }
  room_[small] = roomBelow(peak, mine);
  room_[!small] = roomBelow(pools_[!small].peak, others);
  all_room_ = roomBelow(all_peak_, all);
}

void BlockStats::measureRooms() noexcept {
  Figures figures[2];
  Figures all;
  allocationFigures(pools_[0], figures[0]);
  allocationFigures(pools_[1], figures[1]);
  for (int f = 0; f < kAllocationFigures; ++f) all[f] = figures[0][f] + figures[1][f];
  for (int p = 0; p < 2; ++p) room_[p] = roomBelow(pools_[p].peak, figures[p]);
  all_room_ = roomBelow(all_peak_, all);
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
