// The memory group: statistics that follow allocations, peak and cumulative
// resets, cache release, the device's free and total memory, the per-process
// memory fraction, and the pinned cache's statistics.
//
// Allocations go through getDeviceAllocator, the path every framework uses.
// The checks compare before and after one allocation, so memory held by other
// code in the process does not matter; nothing else may allocate on the
// device while they run, which holds for a test binary or `accel check`.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace memory_cases {
namespace {

constexpr std::size_t kBytes = std::size_t{1} << 20;

struct NamedStat {
  const char* name;
  Stat stat;
};

std::vector<NamedStat> statsOf(const MemoryStats& s) {
  return {{"allocated_bytes", s.allocated_bytes}, {"reserved_bytes", s.reserved_bytes},
          {"active_bytes", s.active_bytes},       {"requested_bytes", s.requested_bytes},
          {"allocations", s.allocations},         {"segments", s.segments}};
}

// Allocates kBytes on device `index` and frees them: the peak rises, and a
// caching allocator keeps the memory reserved. Returns the statistics from
// before the allocation.
MemoryStats statsBeforeAllocatingAndFreeing(AcceleratorHooks& hooks, DeviceIndex index) {
  MemoryStats before = hooks.memoryStats(index);
  hooks.getDeviceAllocator(index).allocate(kBytes).reset();
  return before;
}

void memoryStatsFollowAllocations(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    MemoryStats before = hooks.memoryStats(index);
    DataPtr data = hooks.getDeviceAllocator(index).allocate(kBytes);
    MemoryStats during = hooks.memoryStats(index);
    EXPECT_GE(during.allocated_bytes.current,
              before.allocated_bytes.current + std::int64_t(kBytes))
        << hookName(HookId::memoryStats) << "(" << i << ").allocated_bytes.current while "
        << kBytes << " bytes are allocated";
    EXPECT_GE(during.requested_bytes.current,
              before.requested_bytes.current + std::int64_t(kBytes))
        << hookName(HookId::memoryStats) << "(" << i << ").requested_bytes.current while "
        << kBytes << " bytes are allocated";
    EXPECT_EQ(during.allocations.current, before.allocations.current + 1)
        << hookName(HookId::memoryStats) << "(" << i
        << ").allocations.current after one allocation";
    EXPECT_GE(during.reserved_bytes.current, during.allocated_bytes.current)
        << hookName(HookId::memoryStats) << "(" << i
        << "): reserved_bytes below allocated_bytes";
    EXPECT_GE(during.allocated_bytes.peak, during.allocated_bytes.current)
        << hookName(HookId::memoryStats) << "(" << i << ").allocated_bytes.peak";
    data.reset();
    MemoryStats after = hooks.memoryStats(index);
    EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current)
        << hookName(HookId::memoryStats) << "(" << i
        << ").allocated_bytes.current after the memory was freed";
    EXPECT_EQ(after.allocations.current, before.allocations.current)
        << hookName(HookId::memoryStats) << "(" << i
        << ").allocations.current after the memory was freed";
  }
}

void memoryStatsAreConsistent(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    const std::vector<NamedStat> before = statsOf(hooks.memoryStats(DeviceIndex(i)));
    DataPtr data = hooks.getDeviceAllocator(DeviceIndex(i)).allocate(kBytes);
    const std::vector<NamedStat> during = statsOf(hooks.memoryStats(DeviceIndex(i)));
    for (std::size_t k = 0; k < during.size(); ++k) {
      const Stat& s = during[k].stat;
      const Stat& b = before[k].stat;
      EXPECT_GE(s.current, 0) << hookName(HookId::memoryStats) << "(" << i << ")."
                              << during[k].name << ".current";
      EXPECT_GE(s.peak, s.current) << hookName(HookId::memoryStats) << "(" << i << ")."
                                   << during[k].name << ": peak below current";
      // Differences: the cumulative sums start again at a
      // resetAccumulatedMemoryStats, the current value does not.
      EXPECT_EQ((s.allocated - b.allocated) - (s.freed - b.freed), s.current - b.current)
          << hookName(HookId::memoryStats) << "(" << i << ")." << during[k].name
          << ": the change of current must equal the change of the cumulative "
             "increases (allocated) minus that of the cumulative decreases (freed)";
    }
  }
  expectCurrentDeviceResolved(hooks, HookId::memoryStats, [&](DeviceIndex i) {
    return hooks.memoryStats(i).allocations.current;
  });
  expectIndexRejected(hooks, HookId::memoryStats, count,
                      [&](DeviceIndex i) { return hooks.memoryStats(i); });
}

void resetPeakMemoryStatsLowersPeakToCurrent(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    MemoryStats before = statsBeforeAllocatingAndFreeing(hooks, index);
    MemoryStats freed = hooks.memoryStats(index);
    EXPECT_GE(freed.allocated_bytes.peak,
              before.allocated_bytes.current + std::int64_t(kBytes))
        << hookName(HookId::memoryStats) << "(" << i
        << ").allocated_bytes.peak after allocating and freeing " << kBytes << " bytes";
    hooks.resetPeakMemoryStats(index);
    for (const NamedStat& s : statsOf(hooks.memoryStats(index))) {
      EXPECT_EQ(s.stat.peak, s.stat.current)
          << hookName(HookId::memoryStats) << "(" << i << ")." << s.name << ".peak after "
          << hookName(HookId::resetPeakMemoryStats) << "(" << i << ")";
    }
  }
}

void emptyCacheReleasesUnusedMemory(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    MemoryStats before = statsBeforeAllocatingAndFreeing(hooks, index);
    hooks.emptyCache();
    MemoryStats after = hooks.memoryStats(index);
    EXPECT_LE(after.reserved_bytes.current, before.reserved_bytes.current)
        << hookName(HookId::memoryStats) << "(" << i
        << ").reserved_bytes.current after freeing " << kBytes << " bytes and "
        << hookName(HookId::emptyCache) << "(): the freed memory is still reserved";
    EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current)
        << hookName(HookId::memoryStats) << "(" << i << ").allocated_bytes.current after "
        << hookName(HookId::emptyCache) << "()";
  }
}

// getMemoryInfo(index), or nullopt after checking that the refusal is the
// documented NotSupported naming the backend and the hook (a backend that
// cannot tell its capacity). A missing *Impl (HookNotImplemented) propagates.
std::optional<DeviceMemoryInfo> memoryInfoOrRefusal(AcceleratorHooks& hooks,
                                                    DeviceIndex index) {
  try {
    return hooks.getMemoryInfo(index);
  } catch (const HookNotImplemented&) {
    throw;
  } catch (const NotSupported& e) {
    const std::string_view message = errorMessage(e);
    EXPECT_NE(message.find(hooks.name()), std::string_view::npos)
        << hookName(HookId::getMemoryInfo)
        << " refused without naming the backend: " << message;
    EXPECT_NE(message.find(hookName(HookId::getMemoryInfo)), std::string_view::npos)
        << hookName(HookId::getMemoryInfo)
        << " refused without naming the hook: " << message;
    return std::nullopt;
  }
}

// Large enough to need a segment of its own (above the large segment size),
// small enough for any device worth testing.
constexpr std::size_t kLargeBytes = std::size_t{32} << 20;

void getMemoryInfoReportsFreeWithinTotal(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    hooks.emptyCache();
    std::optional<DeviceMemoryInfo> before = memoryInfoOrRefusal(hooks, index);
    if (!before) GTEST_SKIP() << "'" << hooks.name() << "' cannot report its memory";
    EXPECT_GT(before->total_bytes, 0u)
        << hookName(HookId::getMemoryInfo) << "(" << i << ").total_bytes";
    EXPECT_LE(before->free_bytes, before->total_bytes)
        << hookName(HookId::getMemoryInfo) << "(" << i << "): free above total";
    if (before->free_bytes < 2 * kLargeBytes) continue;  // no room to watch it drop
    DataPtr data = hooks.getDeviceAllocator(index).allocate(kLargeBytes);
    const DeviceMemoryInfo during = hooks.getMemoryInfo(index);
    EXPECT_EQ(during.total_bytes, before->total_bytes)
        << hookName(HookId::getMemoryInfo) << "(" << i << ").total_bytes changed";
    EXPECT_LT(during.free_bytes, before->free_bytes)
        << hookName(HookId::getMemoryInfo) << "(" << i << ").free_bytes did not drop "
        << "while " << kLargeBytes << " bytes were allocated";
  }
  expectCurrentDeviceResolved(hooks, HookId::getMemoryInfo, [&](DeviceIndex i) {
    return hooks.getMemoryInfo(i).total_bytes;
  });
  expectIndexRejected(hooks, HookId::getMemoryInfo, count,
                      [&](DeviceIndex i) { return hooks.getMemoryInfo(i); });
}

void resetAccumulatedMemoryStatsZeroesCumulativeFigures(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    (void)statsBeforeAllocatingAndFreeing(hooks, index);
    DataPtr kept = hooks.getDeviceAllocator(index).allocate(kBytes);
    const MemoryStats held = hooks.memoryStats(index);
    hooks.resetAccumulatedMemoryStats(index);
    const MemoryStats reset = hooks.memoryStats(index);
    const std::vector<NamedStat> held_stats = statsOf(held);
    const std::vector<NamedStat> reset_stats = statsOf(reset);
    for (std::size_t k = 0; k < reset_stats.size(); ++k) {
      const Stat& s = reset_stats[k].stat;
      EXPECT_EQ(s.allocated, 0)
          << hookName(HookId::memoryStats) << "(" << i << ")." << reset_stats[k].name
          << ".allocated after " << hookName(HookId::resetAccumulatedMemoryStats);
      EXPECT_EQ(s.freed, 0) << hookName(HookId::memoryStats) << "(" << i << ")."
                            << reset_stats[k].name << ".freed after "
                            << hookName(HookId::resetAccumulatedMemoryStats);
      EXPECT_EQ(s.current, held_stats[k].stat.current)
          << hookName(HookId::resetAccumulatedMemoryStats) << "(" << i << ") changed "
          << reset_stats[k].name << ".current";
      EXPECT_EQ(s.peak, held_stats[k].stat.peak)
          << hookName(HookId::resetAccumulatedMemoryStats) << "(" << i << ") changed "
          << reset_stats[k].name << ".peak";
    }
    EXPECT_EQ(reset.num_device_alloc, 0) << "num_device_alloc after reset";
    EXPECT_EQ(reset.num_device_free, 0) << "num_device_free after reset";
    EXPECT_EQ(reset.num_alloc_retries, 0) << "num_alloc_retries after reset";
    EXPECT_EQ(reset.num_ooms, 0) << "num_ooms after reset";
    kept.reset();
    const MemoryStats after = hooks.memoryStats(index);
    EXPECT_EQ(after.allocated_bytes.freed,
              held.allocated_bytes.current - after.allocated_bytes.current)
        << "allocated_bytes.freed counts the bytes freed since the reset";
    EXPECT_EQ(after.allocated_bytes.allocated, 0)
        << "allocated_bytes.allocated: nothing was allocated since the reset";
  }
  expectIndexRejected(hooks, HookId::resetAccumulatedMemoryStats, count,
                      [&](DeviceIndex i) {
                        hooks.resetAccumulatedMemoryStats(i);
                        return 0;
                      });
}

void setMemoryFractionCapsAllocations(AcceleratorHooks& hooks) {
  for (const double bad : {-0.25, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.setMemoryFraction(bad, 0); },
        {hookName(HookId::setMemoryFraction), "between 0 and 1"}))
        << hookName(HookId::setMemoryFraction) << "(" << bad << ")";
  }
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    const std::optional<DeviceMemoryInfo> info = memoryInfoOrRefusal(hooks, index);
    if (!info) {
      EXPECT_TRUE(throwsContaining<NotSupported>(
          [&] { hooks.setMemoryFraction(0.5, index); },
          {hooks.name(), hookName(HookId::setMemoryFraction)}))
          << "a backend that cannot tell its capacity cannot cap a fraction of it";
      continue;
    }
    if (info->free_bytes < 2 * kLargeBytes) continue;  // too full to try
    hooks.emptyCache();
    hooks.setMemoryFraction(0.0, index);
    EXPECT_TRUE(throwsContaining<OutOfMemory>(
        [&] { (void)hooks.getDeviceAllocator(index).allocate(kLargeBytes); }, {}))
        << "an allocation of " << kLargeBytes << " bytes after "
        << hookName(HookId::setMemoryFraction) << "(0, " << i << ")";
    hooks.setMemoryFraction(1.0, index);
    EXPECT_NO_THROW(hooks.getDeviceAllocator(index).allocate(kLargeBytes).reset())
        << "after " << hookName(HookId::setMemoryFraction) << "(1, " << i << ")";
  }
  expectIndexRejected(hooks, HookId::setMemoryFraction, count, [&](DeviceIndex i) {
    hooks.setMemoryFraction(1.0, i);
    return 0;
  });
}

void hostMemoryStatsFollowPinnedAllocations(AcceleratorHooks& hooks) {
  MemoryStats before;
  try {
    before = hooks.hostMemoryStats();
  } catch (const HookNotImplemented&) {
    throw;
  } catch (const NotSupported& e) {
    const std::string_view message = errorMessage(e);
    EXPECT_NE(message.find(hooks.name()), std::string_view::npos) << message;
    EXPECT_NE(message.find(hookName(HookId::hostMemoryStats)), std::string_view::npos)
        << message;
    GTEST_SKIP() << "'" << hooks.name() << "' has no pinned cache: " << message;
  }
  constexpr std::size_t kPinnedBytes = 4096;
  DataPtr data = hooks.getPinnedMemoryAllocator().allocate(kPinnedBytes);
  const MemoryStats during = hooks.hostMemoryStats();
  EXPECT_GE(during.allocated_bytes.current,
            before.allocated_bytes.current + std::int64_t(kPinnedBytes))
      << hookName(HookId::hostMemoryStats) << "().allocated_bytes.current";
  EXPECT_EQ(during.allocations.current, before.allocations.current + 1)
      << hookName(HookId::hostMemoryStats) << "().allocations.current";
  EXPECT_GE(during.reserved_bytes.current, during.allocated_bytes.current)
      << hookName(HookId::hostMemoryStats) << "(): reserved below allocated";
  data.reset();
  EXPECT_EQ(hooks.hostMemoryStats().allocations.current, before.allocations.current)
      << hookName(HookId::hostMemoryStats) << "().allocations.current after the free";
}

}  // namespace
}  // namespace memory_cases

std::vector<ConformanceCase> memoryCases() {
  using namespace memory_cases;
  using enum HookId;
  return {deviceCase("MemoryStatsFollowAllocations", memoryStatsFollowAllocations,
                     {memoryStats, getDeviceAllocator}),
          deviceCase("MemoryStatsAreConsistent", memoryStatsAreConsistent, {memoryStats}),
          deviceCase("ResetPeakMemoryStatsLowersPeakToCurrent",
                     resetPeakMemoryStatsLowersPeakToCurrent,
                     {resetPeakMemoryStats, memoryStats}),
          deviceCase("EmptyCacheReleasesUnusedMemory", emptyCacheReleasesUnusedMemory,
                     {emptyCache, memoryStats}),
          deviceCase("GetMemoryInfoReportsFreeWithinTotal",
                     getMemoryInfoReportsFreeWithinTotal,
                     {getMemoryInfo, getDeviceAllocator, emptyCache}),
          deviceCase("ResetAccumulatedMemoryStatsZeroesCumulativeFigures",
                     resetAccumulatedMemoryStatsZeroesCumulativeFigures,
                     {resetAccumulatedMemoryStats, memoryStats, getDeviceAllocator}),
          deviceCase("SetMemoryFractionCapsAllocations", setMemoryFractionCapsAllocations,
                     {setMemoryFraction, getMemoryInfo, getDeviceAllocator, emptyCache}),
          deviceCase("HostMemoryStatsFollowPinnedAllocations",
                     hostMemoryStatsFollowPinnedAllocations,
                     {hostMemoryStats, getPinnedMemoryAllocator})};
}

}  // namespace accel::conformance::detail
