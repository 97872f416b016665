// The memory group: statistics that follow allocations, peak reset, cache release.
//
// Allocations go through getDeviceAllocator, the path every framework uses.
// The checks compare before and after one allocation, so memory held by other
// code in the process does not matter; nothing else may allocate on the
// device while they run, which holds for a test binary or `accel check`.
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
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
    DataPtr data = hooks.getDeviceAllocator(DeviceIndex(i)).allocate(kBytes);
    for (const NamedStat& s : statsOf(hooks.memoryStats(DeviceIndex(i)))) {
      EXPECT_GE(s.stat.current, 0)
          << hookName(HookId::memoryStats) << "(" << i << ")." << s.name << ".current";
      EXPECT_GE(s.stat.peak, s.stat.current) << hookName(HookId::memoryStats) << "(" << i
                                             << ")." << s.name << ": peak below current";
      EXPECT_EQ(s.stat.allocated - s.stat.freed, s.stat.current)
          << hookName(HookId::memoryStats) << "(" << i << ")." << s.name
          << ": current must equal the cumulative increases (allocated) minus the "
             "cumulative "
             "decreases (freed)";
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

}  // namespace

std::vector<ConformanceCase> memoryCases() {
  using enum HookId;
  return {deviceCase("MemoryStatsFollowAllocations", memoryStatsFollowAllocations,
                     {memoryStats, getDeviceAllocator}),
          deviceCase("MemoryStatsAreConsistent", memoryStatsAreConsistent, {memoryStats}),
          deviceCase("ResetPeakMemoryStatsLowersPeakToCurrent",
                     resetPeakMemoryStatsLowersPeakToCurrent,
                     {resetPeakMemoryStats, memoryStats}),
          deviceCase("EmptyCacheReleasesUnusedMemory", emptyCacheReleasesUnusedMemory,
                     {emptyCache, memoryStats})};
}

}  // namespace accel::conformance::detail
