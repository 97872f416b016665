// BlockStats: the block figures of MemoryStats, kept at the cost the
// allocate/free path can afford.
//
// Every allocation and free changes seven figures (allocated, active,
// requested and inactive-split bytes and counts), each for its pool and for
// all pools, each with current, peak and cumulative increases and decreases:
// as plain Stats that is some forty read-modify-writes per pair, a third of
// the pair's time. Most of them follow from a few:
//   - current is the running increases minus the running decreases;
//   - the "all" current and cumulative values are small + large;
//   - active is allocated plus what callers freed while streams still use it
//     (pending), and every active increase is an allocation.
// So a pool keeps running increases and decreases of allocated, requested and
// inactive-split bytes and counts, and the pending bytes and count; only the
// peaks, for each pool and for all, are kept as such. An allocation adds to
// three running totals and checks ten peaks (branches almost never taken); a
// free adds to three others, so neither waits on the other's stores.
// writeTo() derives the MemoryStats figures; they are the same, field for
// field, as keeping every Stat would give.
//
// Thread-safety: none; the device's lock guards it.
#pragma once

#include <cstdint>

#include "accel/memory_stats.h"

namespace accel::memory::detail {

class BlockStats {
 public:
  // A block of `bytes` (`requested` asked for) handed out from a pool.
  void allocated(bool small, std::int64_t bytes, std::int64_t requested) noexcept {
    Pool& pool = pools_[small];
    const Pool& other = pools_[!small];
    pool.allocated_bytes.increases += bytes;
    pool.allocations.increases += 1;
    pool.requested_bytes.increases += requested;
    const std::int64_t bytes_now = pool.allocated_bytes.current();
    const std::int64_t other_bytes = other.allocated_bytes.current();
    const std::int64_t count_now = pool.allocations.current();
    const std::int64_t other_count = other.allocations.current();
    raise(pool, other, kAllocatedBytes, bytes_now, other_bytes);
    raise(pool, other, kAllocations, count_now, other_count);
    raise(pool, other, kRequestedBytes, pool.requested_bytes.current(),
          other.requested_bytes.current());
    raise(pool, other, kActiveBytes, bytes_now + pool.pending_bytes,
          other_bytes + other.pending_bytes);
    raise(pool, other, kActive, count_now + pool.pending, other_count + other.pending);
  }
  // The caller freed the block; `pending`: streams still use it, so it stays
  // active until returned().
  void freed(bool small, std::int64_t bytes, std::int64_t requested,
             bool pending) noexcept {
    Pool& pool = pools_[small];
    pool.allocated_bytes.decreases += bytes;
    pool.allocations.decreases += 1;
    pool.requested_bytes.decreases += requested;
    if (pending) {
      pool.pending_bytes += bytes;
      pool.pending += 1;
    }
  }
  // A block freed with pending work is idle now.
  void returned(bool small, std::int64_t bytes) noexcept {
    pools_[small].pending_bytes -= bytes;
    pools_[small].pending -= 1;
  }
  // A free block inside a split segment appears (+) or goes (-).
  void splitFree(bool small, std::int64_t bytes) noexcept {
    Pool& pool = pools_[small];
    const Pool& other = pools_[!small];
    pool.split_bytes.increases += bytes;
    pool.split.increases += 1;
    raise(pool, other, kSplitBytes, pool.split_bytes.current(),
          other.split_bytes.current());
    raise(pool, other, kSplit, pool.split.current(), other.split.current());
  }
  void splitGone(bool small, std::int64_t bytes) noexcept {
    pools_[small].split_bytes.decreases += bytes;
    pools_[small].split.decreases += 1;
  }

  [[nodiscard]] std::int64_t allocatedBytes() const noexcept {
    return pools_[0].allocated_bytes.current() + pools_[1].allocated_bytes.current();
  }
  // Sets every peak to its current value.
  void resetPeaks() noexcept;
  // Writes the seven block figures of `out` (the others are left as they are).
  void writeTo(MemoryStats& out) const noexcept;

 private:
  enum Figure : int {
    kAllocatedBytes,
    kAllocations,
    kRequestedBytes,
    kActiveBytes,
    kActive,
    kSplitBytes,
    kSplit,
    kFigures
  };
  // Running totals only: an allocation adds to one, a free to the other, so
  // neither waits on the other's store; current is their difference.
  struct Counter {
    std::int64_t increases = 0;
    std::int64_t decreases = 0;
    [[nodiscard]] std::int64_t current() const noexcept { return increases - decreases; }
  };
  struct Pool {
    Counter allocated_bytes;
    Counter allocations;
    Counter requested_bytes;
    Counter split_bytes;
    Counter split;
    std::int64_t pending_bytes = 0;  // freed by callers, still used by streams
    std::int64_t pending = 0;
    std::int64_t peak[kFigures] = {};
  };

  void raise(Pool& pool, const Pool& other, Figure figure, std::int64_t mine,
             std::int64_t others) noexcept {
    if (mine > pool.peak[figure]) [[unlikely]]
      pool.peak[figure] = mine;
    if (mine + others > all_peak_[figure]) [[unlikely]]
      all_peak_[figure] = mine + others;
  }
  // Current value of a figure in one pool.
  [[nodiscard]] static std::int64_t current(const Pool& pool, Figure figure) noexcept;
  [[nodiscard]] static std::int64_t increases(const Pool& pool, Figure figure) noexcept;

  Pool pools_[2];  // [0] large, [1] small (indexed by the small flag)
  std::int64_t all_peak_[kFigures] = {};
};

}  // namespace accel::memory::detail
