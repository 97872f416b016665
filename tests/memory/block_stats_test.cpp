// BlockStats (src/core/memory/block_stats.h) against a model that keeps every
// figure as a plain PooledStat, updated at every event as MemoryStats' own
// add() does. BlockStats skips most peak checks: an allocation takes its size
// from rooms below the peaks (lower bounds, measured again when one runs
// out), the inactive-split figures keep exact rooms; a thread cache's frees
// and allocations reach it only when absorbed. Whatever it skips, the seven
// figures it writes must equal the model's, field for field, whenever they
// are read (after the thread caches' figures are absorbed, as
// DeviceCache::stats does).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "memory/block_stats.h"

namespace accel::memory::detail {
namespace {

struct Model {
  MemoryStats stats;

  void allocated(bool small, std::int64_t bytes, std::int64_t requested) {
    stats.allocated_bytes.add(small, bytes);
    stats.allocations.add(small, 1);
    stats.requested_bytes.add(small, requested);
    stats.active_bytes.add(small, bytes);
    stats.active.add(small, 1);
  }
  void freed(bool small, std::int64_t bytes, std::int64_t requested, bool pending) {
    stats.allocated_bytes.add(small, -bytes);
    stats.allocations.add(small, -1);
    stats.requested_bytes.add(small, -requested);
    if (!pending) returned(small, bytes);
  }
  void returned(bool small, std::int64_t bytes) {
    stats.active_bytes.add(small, -bytes);
    stats.active.add(small, -1);
  }
  void splitFree(bool small, std::int64_t bytes) {
    stats.inactive_split_bytes.add(small, bytes);
    stats.inactive_split.add(small, 1);
  }
  void splitGone(bool small, std::int64_t bytes) {
    stats.inactive_split_bytes.add(small, -bytes);
    stats.inactive_split.add(small, -1);
  }
};

void expectSame(const Stat& got, const Stat& want, const std::string& name) {
  EXPECT_EQ(got.current, want.current) << name << ".current";
  EXPECT_EQ(got.peak, want.peak) << name << ".peak";
  EXPECT_EQ(got.allocated, want.allocated) << name << ".allocated";
  EXPECT_EQ(got.freed, want.freed) << name << ".freed";
}

void expectSame(const PooledStat& got, const PooledStat& want, const std::string& name,
                int step) {
  const std::string at = name + " at step " + std::to_string(step);
  expectSame(static_cast<const Stat&>(got), static_cast<const Stat&>(want), at + " all");
  expectSame(got.small_pool, want.small_pool, at + " small_pool");
  expectSame(got.large_pool, want.large_pool, at + " large_pool");
}

struct Allocation {
  bool small;
  std::int64_t bytes;
  std::int64_t requested;
};

// Random traffic in both pools: allocations (some served by a "thread
// cache" whose figures BlockStats sees only when absorbed), frees with and
// without pending work, free split blocks appearing, going, merging and
// being cut down, peak and total resets; the figures compared every few
// steps. Sizes span three orders of magnitude so that rooms run out often.
void runRandomTraffic(std::uint32_t seed) {
  BlockStats stats;
  Model model;
  std::mt19937 random(seed);
  std::vector<Allocation> live;
  std::vector<Allocation> pending;
  std::vector<Allocation> held;  // freed into the thread cache, reusable
  std::vector<std::int64_t> split[2];
  LocalBlockFigures local[2];
  const auto size = [&] { return static_cast<std::int64_t>(512) << (random() % 11); };
  const auto take = [&](std::vector<Allocation>& from) {
    const std::size_t at = random() % from.size();
    const Allocation taken = from[at];
    from[at] = from.back();
    from.pop_back();
    return taken;
  };
  const auto takeSplit = [&](bool small) {
    std::vector<std::int64_t>& blocks = split[small];
    const std::size_t at = random() % blocks.size();
    const std::int64_t bytes = blocks[at];
    blocks[at] = blocks.back();
    blocks.pop_back();
    return bytes;
  };
  const auto absorbLocal = [&] {
    for (int small = 0; small < 2; ++small) {
      if (local[small].empty()) continue;
      stats.absorb(small != 0, local[small]);
      local[small] = {};
    }
    held.clear();  // held blocks are counted free; they go back to the pool
  };
  for (int step = 0; step < 20000; ++step) {
    const unsigned roll = random() % 100;
    const bool small = random() % 2 == 0;
    if (roll < 22) {
      const Allocation made{small, size(), 0};
      const Allocation asked{made.small, made.bytes,
                             made.bytes - static_cast<std::int64_t>(random() % 512)};
      // As DeviceCache::countAllocation: a peak may rise only once every
      // thread cache's figures are in.
      if (!stats.tryAllocated(asked.small, asked.bytes, asked.requested)) {
        absorbLocal();
        stats.allocated(asked.small, asked.bytes, asked.requested);
      }
      model.allocated(asked.small, asked.bytes, asked.requested);
      live.push_back(asked);
    } else if (roll < 40 && !live.empty()) {
      const Allocation gone = take(live);
      const bool is_pending = random() % 5 == 0;
      stats.freed(gone.small, gone.bytes, gone.requested, is_pending);
      model.freed(gone.small, gone.bytes, gone.requested, is_pending);
      if (is_pending) pending.push_back(gone);
    } else if (roll < 44 && !pending.empty()) {
      const Allocation done = take(pending);
      stats.returned(done.small, done.bytes);
      model.returned(done.small, done.bytes);
    } else if (roll < 52 && !live.empty()) {
      // Freed into the thread cache: BlockStats does not see it yet.
      const Allocation gone = take(live);
      LocalBlockFigures& figures = local[gone.small];
      figures.bytes_out += gone.bytes;
      figures.count_out += 1;
      figures.requested_out += gone.requested;
      model.freed(gone.small, gone.bytes, gone.requested, false);
      held.push_back(gone);
    } else if (roll < 58 && !held.empty()) {
      // Served again by the thread cache, with at most what it freed asked.
      Allocation again = take(held);
      LocalBlockFigures& figures = local[again.small];
      again.requested = std::min(again.bytes - static_cast<std::int64_t>(random() % 512),
                                 figures.requested_out - figures.requested_in);
      if (again.requested <= 0) continue;
      figures.bytes_in += again.bytes;
      figures.count_in += 1;
      figures.requested_in += again.requested;
      model.allocated(again.small, again.bytes, again.requested);
      live.push_back(again);
    } else if (roll < 72) {
      const std::int64_t bytes = size();
      stats.splitFree(small, bytes);
      model.splitFree(small, bytes);
      split[small].push_back(bytes);
    } else if (roll < 78 && !split[small].empty()) {
      const std::int64_t bytes = takeSplit(small);
      stats.splitGone(small, bytes);
      model.splitGone(small, bytes);
    } else if (roll < 82 && split[small].size() >= 2) {
      // Two free neighbours gone at once (a merge into a whole segment).
      const std::int64_t first = takeSplit(small);
      const std::int64_t second = takeSplit(small);
      stats.splitGone(small, first + second, 2);
      model.splitGone(small, first);
      model.splitGone(small, second);
    } else if (roll < 96 && !split[small].empty()) {
      // A merge of one or two free neighbours and the freed block between
      // them (it grows), or a free block cut down by an allocation (it
      // shrinks), staying split.
      const std::int64_t first = takeSplit(small);
      std::int64_t gone_bytes = first;
      std::int64_t count = 1;
      std::int64_t second = 0;
      if (!split[small].empty() && random() % 2 == 0) {
        second = takeSplit(small);
        gone_bytes += second;
        count = 2;
      }
      const bool cut = count == 1 && first > 512 && random() % 3 == 0;
      const std::int64_t bytes =
          cut ? first -
                    512 * (1 + static_cast<std::int64_t>(random()) % (first / 512 - 1))
              : gone_bytes + size();
      stats.splitReplaced(small, gone_bytes, count, bytes);
      model.splitGone(small, first);
      if (count == 2) model.splitGone(small, second);
      model.splitFree(small, bytes);
      split[small].push_back(bytes);
    } else if (roll < 98) {
      absorbLocal();
      stats.resetPeaks();
      model.stats.resetPeaks();
    } else {
      absorbLocal();
      stats.resetAccumulated();
      model.stats.resetAccumulated();
    }
    if (step % 7 == 0 || step == 19999) {
      absorbLocal();
      MemoryStats got;
      stats.writeTo(got);
      const MemoryStats& want = model.stats;
      expectSame(got.allocated_bytes, want.allocated_bytes, "allocated_bytes", step);
      expectSame(got.allocations, want.allocations, "allocations", step);
      expectSame(got.requested_bytes, want.requested_bytes, "requested_bytes", step);
      expectSame(got.active_bytes, want.active_bytes, "active_bytes", step);
      expectSame(got.active, want.active, "active", step);
      expectSame(got.inactive_split_bytes, want.inactive_split_bytes,
                 "inactive_split_bytes", step);
      expectSame(got.inactive_split, want.inactive_split, "inactive_split", step);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(BlockStats, EveryFigureFollowsAModelThroughRandomTraffic) {
  for (const std::uint32_t seed : {1U, 2026U, 77777U}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runRandomTraffic(seed);
    if (::testing::Test::HasFailure()) return;
  }
}

// The inactive-split peaks after a reset: the first growth past the figures
// at the reset is a new peak, in its pool and in all pools, and a shrink
// never lowers a peak.
TEST(BlockStats, SplitPeaksRiseFromTheirResetValues) {
  BlockStats stats;
  stats.splitFree(true, 4096);
  stats.splitFree(false, 1 << 21);
  stats.splitGone(true, 4096);
  stats.resetPeaks();
  MemoryStats out;
  stats.writeTo(out);
  EXPECT_EQ(out.inactive_split_bytes.peak, 1 << 21);
  EXPECT_EQ(out.inactive_split_bytes.small_pool.peak, 0);
  stats.splitFree(true, 512);
  stats.splitReplaced(true, 512, 1, 1536);   // a merge: 512 -> 1536
  stats.splitReplaced(true, 1536, 1, 1024);  // cut down: no new peak
  stats.writeTo(out);
  EXPECT_EQ(out.inactive_split_bytes.small_pool.current, 1024);
  EXPECT_EQ(out.inactive_split_bytes.small_pool.peak, 1536);
  EXPECT_EQ(out.inactive_split_bytes.peak, (1 << 21) + 1536);
  EXPECT_EQ(out.inactive_split.small_pool.peak, 1);
  EXPECT_EQ(out.inactive_split.peak, 2);
  // Cumulative since construction (no resetAccumulated).
  EXPECT_EQ(out.inactive_split_bytes.small_pool.allocated, 4096 + 512 + 1536 + 1024);
  EXPECT_EQ(out.inactive_split_bytes.small_pool.freed, 4096 + 512 + 1536);
  EXPECT_EQ(out.inactive_split.small_pool.allocated, 4);
  EXPECT_EQ(out.inactive_split.small_pool.freed, 3);
}

}  // namespace
}  // namespace accel::memory::detail
