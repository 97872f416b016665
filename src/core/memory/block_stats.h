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
// three running totals and, rather than checking ten peaks, takes its size
// from two "rooms" below the peaks (Room); only when a room would go
// negative are the peaks checked and the rooms measured again. A free adds
// to three other running totals and gives its size back to the rooms, so
// neither waits on the other's stores. The inactive-split figures, which only
// split and merge change, keep exact rooms (peak - current) instead: a miss
// changes them several times (each held block it returns merges, its block
// is split off a free one), and a room is one subtraction where a peak check
// must sum both pools' running totals.
// writeTo() derives the MemoryStats figures; they are the same, field for
// field, as keeping every Stat would give.
//
// Thread-safety: none; the device's lock guards it.
#pragma once

#include <cstdint>

#include "accel/memory_stats.h"

namespace accel::memory::detail {

// What one thread cache (thread_cache.h) did to one pool's allocated figures
// since its figures were last absorbed: allocations it served (in) and frees
// it took (out). It only serves blocks that it took, so out >= in for bytes
// and counts; it serves a request only while out >= in stays true for
// requested bytes too. So its figures only ever lower the device's.
struct LocalBlockFigures {
  std::int64_t bytes_in = 0;
  std::int64_t bytes_out = 0;
  std::int64_t count_in = 0;
  std::int64_t count_out = 0;
  std::int64_t requested_in = 0;
  std::int64_t requested_out = 0;
  [[nodiscard]] bool empty() const noexcept {
    return count_in == 0 && count_out == 0 && bytes_in == 0 && bytes_out == 0 &&
           requested_in == 0 && requested_out == 0;
  }
};

class BlockStats {
 public:
  // A block of `bytes` (`requested` asked for) handed out from a pool; a
  // peak it raises is raised exactly (raisePeaks).
  void allocated(bool small, std::int64_t bytes, std::int64_t requested) noexcept {
    if (tryAllocated(small, bytes, requested)) [[likely]]
      return;
    Pool& pool = pools_[small];
    pool.allocated_bytes.increases += bytes;
    pool.allocations.increases += 1;
    pool.requested_bytes.increases += requested;
    raisePeaks(small);
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
      return;  // active figures stay: no room is won
    }
    room_[small].give(bytes, requested);
    all_room_.give(bytes, requested);
  }
  // A block freed with pending work is idle now.
  void returned(bool small, std::int64_t bytes) noexcept {
    pools_[small].pending_bytes -= bytes;
    pools_[small].pending -= 1;
  }
  // Free blocks inside split segments (the inactive-split figures): one of
  // `bytes` appears; `count` of them (`bytes` in all) go; `count` of them
  // (`gone_bytes`) merge into, or are cut down to, one of `bytes` that stays
  // split. Their peaks are kept through exact rooms (SplitRoom): a change
  // subtracts from the rooms what it adds and raises a peak only when a room
  // would go negative, so it compares no figure with its peak.
  void splitFree(bool small, std::int64_t bytes) noexcept {
    Pool& pool = pools_[small];
    pool.split_bytes.increases += bytes;
    pool.split.increases += 1;
    SplitRoom& mine = split_room_[small];
    const std::int64_t bytes_mine = mine.bytes - bytes;
    const std::int64_t count_mine = mine.count - 1;
    const std::int64_t bytes_all = all_split_room_.bytes - bytes;
    const std::int64_t count_all = all_split_room_.count - 1;
    mine.bytes = bytes_mine;
    mine.count = count_mine;
    all_split_room_.bytes = bytes_all;
    all_split_room_.count = count_all;
    if ((bytes_mine | count_mine | bytes_all | count_all) < 0) [[unlikely]]
      raiseSplitPeaks(small);
  }
  void splitGone(bool small, std::int64_t bytes, std::int64_t count = 1) noexcept {
    Pool& pool = pools_[small];
    pool.split_bytes.decreases += bytes;
    pool.split.decreases += count;
    SplitRoom& mine = split_room_[small];
    mine.bytes += bytes;
    mine.count += count;
    all_split_room_.bytes += bytes;
    all_split_room_.count += count;
  }
  void splitReplaced(bool small, std::int64_t gone_bytes, std::int64_t count,
                     std::int64_t bytes) noexcept {
    // The same figures as splitGone(gone_bytes, count) then splitFree(bytes):
    // the first only lowers them, so only the second's end can be a peak.
    // count >= 1, so no count rises.
    Pool& pool = pools_[small];
    pool.split_bytes.decreases += gone_bytes;
    pool.split_bytes.increases += bytes;
    pool.split.decreases += count;
    pool.split.increases += 1;
    SplitRoom& mine = split_room_[small];
    const std::int64_t grows = bytes - gone_bytes;
    const std::int64_t bytes_mine = mine.bytes - grows;
    const std::int64_t bytes_all = all_split_room_.bytes - grows;
    mine.bytes = bytes_mine;
    mine.count += count - 1;
    all_split_room_.bytes = bytes_all;
    all_split_room_.count += count - 1;
    if ((bytes_mine | bytes_all) < 0) [[unlikely]]
      raiseSplitPeaks(small);
  }

  // allocated() when it raises no peak (fits the rooms), and true; otherwise
  // false, with nothing changed (a caller that must prepare for a peak, see
  // DeviceCache::countAllocation, then calls allocated()). Field by field,
  // in scalars: a Room copied whole is moved through the stack as one
  // 16-byte load of two 8-byte stores, which cannot be forwarded from the
  // store buffer and stalls.
  [[nodiscard]] bool tryAllocated(bool small, std::int64_t bytes,
                                  std::int64_t requested) noexcept {
    Room& mine = room_[small];
    const std::int64_t bytes_mine = mine.bytes - bytes;
    const std::int64_t requested_mine = mine.requested - requested;
    const std::int64_t count_mine = mine.count - 1;
    const std::int64_t bytes_all = all_room_.bytes - bytes;
    const std::int64_t requested_all = all_room_.requested - requested;
    const std::int64_t count_all = all_room_.count - 1;
    if ((bytes_mine | requested_mine | count_mine | bytes_all | requested_all |
         count_all) < 0) [[unlikely]]
      return false;
    Pool& pool = pools_[small];
    pool.allocated_bytes.increases += bytes;
    pool.allocations.increases += 1;
    pool.requested_bytes.increases += requested;
    mine.bytes = bytes_mine;
    mine.requested = requested_mine;
    mine.count = count_mine;
    all_room_.bytes = bytes_all;
    all_room_.requested = requested_all;
    all_room_.count = count_all;
    return true;
  }
  // Adds a thread cache's figures for a pool (see LocalBlockFigures); they
  // lower the current figures, so no peak moves.
  void absorb(bool small, const LocalBlockFigures& local) noexcept {
    Pool& pool = pools_[small];
    pool.allocated_bytes.increases += local.bytes_in;
    pool.allocated_bytes.decreases += local.bytes_out;
    pool.allocations.increases += local.count_in;
    pool.allocations.decreases += local.count_out;
    pool.requested_bytes.increases += local.requested_in;
    pool.requested_bytes.decreases += local.requested_out;
    for (Room* room : {&room_[small], &all_room_}) {
      room->bytes += local.bytes_out - local.bytes_in;
      room->requested += local.requested_out - local.requested_in;
      room->count += local.count_out - local.count_in;
    }
  }

  [[nodiscard]] std::int64_t allocatedBytes() const noexcept {
    return pools_[0].allocated_bytes.current() + pools_[1].allocated_bytes.current();
  }
  // Sets every peak to its current value.
  void resetPeaks() noexcept;
  // Starts the cumulative figures (allocated, freed) again from 0: the
  // running totals stay (current is their difference); what writeTo reports
  // is measured from the totals at this call.
  void resetAccumulated() noexcept;
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

  // Lower bounds on how far the figures an allocation raises are below their
  // peaks: bytes (allocated and active bytes), requested bytes, and counts
  // (allocations and active). An allocation that fits in its pool's room and
  // in the room of all pools raises no peak, so it skips the ten checks; one
  // that does not raises them exactly (raisePeaks) and measures the rooms
  // anew. A free without pending work gives its figures back to the rooms.
  struct Room {
    std::int64_t bytes = 0;
    std::int64_t requested = 0;
    std::int64_t count = 0;
    void give(std::int64_t b, std::int64_t r) noexcept {
      bytes += b;
      requested += r;
      count += 1;
    }
  };
  // How far the inactive-split bytes and count are below their peaks, in
  // each pool and in all: exactly peak - current (nothing else moves these
  // figures), so a room that would go negative is the amount its peak rises
  // by (raiseSplitPeaks), and the peaks need no measuring.
  struct SplitRoom {
    std::int64_t bytes = 0;
    std::int64_t count = 0;
  };
  // The figures an allocation raises, kAllocatedBytes to kActive, current.
  static constexpr int kAllocationFigures = kActive + 1;
  using Figures = std::int64_t[kAllocationFigures];
  static void allocationFigures(const Pool& pool, Figures& out) noexcept;
  // The room below `peak` (a pool's or all_peak_) at `current`.
  [[nodiscard]] static Room roomBelow(const std::int64_t* peak,
                                      const Figures& current) noexcept;
  // The five peak checks of an allocation in `small`'s pool and of all
  // pools, then the rooms measured again. Out of line: rare.
  void raisePeaks(bool small) noexcept;
  void measureRooms() noexcept;
  // Raises the split peaks whose rooms went negative to the current figures
  // and closes those rooms. Out of line: rare.
  [[gnu::noinline]] void raiseSplitPeaks(bool small) noexcept;

  // Current value of a figure in one pool.
  [[nodiscard]] static std::int64_t current(const Pool& pool, Figure figure) noexcept;
  [[nodiscard]] static std::int64_t increases(const Pool& pool, Figure figure) noexcept;

  Pool pools_[2];  // [0] large, [1] small (indexed by the small flag)
  std::int64_t all_peak_[kFigures] = {};
  // The running increases and decreases at the last resetAccumulated, per
  // pool and figure; read only by writeTo, off the allocate/free path.
  std::int64_t increases_at_reset_[2][kFigures] = {};
  std::int64_t decreases_at_reset_[2][kFigures] = {};
  Room room_[2];  // per pool, indexed like pools_
  Room all_room_;
  SplitRoom split_room_[2];  // per pool, indexed like pools_
  SplitRoom all_split_room_;
};

}  // namespace accel::memory::detail
