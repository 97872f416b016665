// A real PyTorch training allocation trace (tools/traces/, recorded by
// scripts/training_trace/) replayed nine times through openreg's device
// allocator, as a framework would drive it: the statistics match what the
// trace implies exactly, nothing leaks, and the cache does not creep (the
// last pass needs no more device memory than the first).
//
// Its own program: openreg gets one device big enough for the trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "accel/accel.h"
#include "accel/memory/size_rules.h"
#include "accel/openreg/openreg.h"
#include "memreplay_trace.h"

namespace {

using accel::tool::Trace;
using accel::tool::TraceEvent;

constexpr int kPasses = 9;

accel::AcceleratorHooks& openreg() {
  static accel::AcceleratorHooks* hooks = [] {
    ::setenv("ACCEL_OPENREG_DEVICES", "1", 1);
    ::setenv("ACCEL_OPENREG_MEMORY", "1GiB", 1);
    ::unsetenv("ACCEL_ALLOC_CONF");
    accel::openreg::registerBackend();
    accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
    return &accel::getHooks(accel::openreg::deviceType());
  }();
  return *hooks;
}

Trace loadTrace() {
  std::ifstream in(ACCEL_TRAINING_TRACE);
  if (!in) ADD_FAILURE() << "cannot open " << ACCEL_TRAINING_TRACE;
  return accel::tool::parseTrace(in, ACCEL_TRAINING_TRACE);
}

// What one pass must show in the statistics, derived from the events alone.
struct Expected {
  std::int64_t allocations = 0;
  std::int64_t peak_requested = 0;  // bytes asked for, live at once
  // The same rounded to the allocator's quantum: a lower bound of the
  // allocated peak, since a block too small to split is handed out whole.
  std::int64_t peak_rounded = 0;
};

Expected expectedOf(const Trace& trace) {
  Expected out;
  std::vector<std::size_t> size(trace.slots);
  std::int64_t requested = 0, allocated = 0;
  for (const TraceEvent& event : trace.events) {
    const auto rounded = static_cast<std::int64_t>(accel::memory::roundSize(event.size));
    if (event.kind == TraceEvent::Kind::Alloc) {
      size[event.slot] = event.size;
      ++out.allocations;
      requested += static_cast<std::int64_t>(event.size);
      allocated += rounded;
      out.peak_requested = std::max(out.peak_requested, requested);
      out.peak_rounded = std::max(out.peak_rounded, allocated);
    } else {
      requested -= static_cast<std::int64_t>(size[event.slot]);
      allocated -= static_cast<std::int64_t>(accel::memory::roundSize(size[event.slot]));
    }
  }
  return out;
}

TEST(OpenRegTrainingTrace, NinePassesKeepExactStatsLeakNothingAndDoNotCreep) {
  accel::AcceleratorHooks& hooks = openreg();
  const Trace trace = loadTrace();
  const Expected expected = expectedOf(trace);
  ASSERT_GT(expected.allocations, 10000) << "the recorded trace is missing or cut";
  accel::Allocator& allocator = hooks.getDeviceAllocator(0);

  std::vector<std::int64_t> segments_at_peak, reserved_at_peak, device_allocs;
  for (int pass = 1; pass <= kPasses; ++pass) {
    hooks.resetPeakMemoryStats(0);
    const std::int64_t allocs_before = hooks.memoryStats(0).num_device_alloc;
    (void)accel::tool::replayThrough(trace, allocator);
    const accel::MemoryStats stats = hooks.memoryStats(0);
    device_allocs.push_back(stats.num_device_alloc - allocs_before);
    SCOPED_TRACE(testing::Message() << "pass " << pass);
    EXPECT_EQ(stats.allocations.current, 0);
    EXPECT_EQ(stats.allocated_bytes.current, 0);
    EXPECT_EQ(stats.requested_bytes.current, 0);
    EXPECT_EQ(stats.active_bytes.current, 0);
    EXPECT_EQ(stats.allocations.allocated, expected.allocations * pass);
    EXPECT_EQ(stats.allocations.freed, expected.allocations * pass);
    EXPECT_EQ(stats.requested_bytes.peak, expected.peak_requested);
    EXPECT_GE(stats.allocated_bytes.peak, expected.peak_rounded);
    EXPECT_EQ(stats.num_ooms, 0);
    segments_at_peak.push_back(stats.segments.peak);
    reserved_at_peak.push_back(stats.reserved_bytes.peak);
  }
  // The cache settles: the last pass holds no more segments, nor bytes, at
  // its peak than the first (fragmentation creep would add some).
  EXPECT_LE(device_allocs.back(), device_allocs.front())
      << "device allocations in each pass: " << testing::PrintToString(device_allocs);
  EXPECT_LE(segments_at_peak.back(), segments_at_peak.front())
      << "segments at the peak of each pass: "
      << testing::PrintToString(segments_at_peak);
  EXPECT_LE(reserved_at_peak.back(), reserved_at_peak.front())
      << "reserved bytes at the peak of each pass: "
      << testing::PrintToString(reserved_at_peak);

  hooks.emptyCache();
  const accel::MemoryStats after = hooks.memoryStats(0);
  EXPECT_EQ(after.reserved_bytes.current, 0);
  EXPECT_EQ(after.segments.current, 0);
  EXPECT_EQ(after.num_device_free, after.num_device_alloc);
}

}  // namespace
