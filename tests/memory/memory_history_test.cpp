#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using Action = MemoryTraceEntry::Action;
using testing::kKiB;
using testing::kMiB;

using testing::stream;

std::vector<Action> actions(const MemorySnapshot& snapshot) {
  std::vector<Action> out;
  for (const MemoryTraceEntry& e : snapshot.device_traces.at(0)) out.push_back(e.action);
  return out;
}

class MemoryHistoryTest : public ::testing::Test {
 protected:
  testing::FakeSegmentSource source_{std::size_t{1} << 30};
  CachingAllocator allocator_{DeviceType::CUDA, 1, source_};
};

TEST_F(MemoryHistoryTest, AllRecordsSegmentAndBlockEventsInOrder) {
  allocator_.recordHistory({HistoryRecording::All, 100, false});
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(3));
  const auto address = reinterpret_cast<std::uintptr_t>(a.get());
  a.reset();
  allocator_.emptyCache();
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  ASSERT_EQ(actions(snapshot),
            (std::vector<Action>{Action::SegmentAlloc, Action::Alloc,
                                 Action::FreeRequested, Action::FreeCompleted,
                                 Action::SegmentFree, Action::Snapshot}));
  const auto& trace = snapshot.device_traces[0];
  EXPECT_EQ(trace[1].address, address);
  EXPECT_EQ(trace[1].size, 4 * kKiB);
  EXPECT_EQ(trace[1].stream.id, 3);
  EXPECT_EQ(trace[0].size, 2 * kMiB);
  for (std::size_t i = 1; i < trace.size(); ++i) {
    EXPECT_GE(trace[i].time_ns, trace[i - 1].time_ns);
  }
  EXPECT_TRUE(trace[1].frames.empty());  // no stacks asked for
}

// Entries are stamped with a cheap counter and converted when the snapshot
// is taken: the times must still be steady-clock nanoseconds, inside the span
// that enclosed the events, and keep the gap between them.
TEST_F(MemoryHistoryTest, TraceTimesAreSteadyClockNanoseconds) {
  const auto steadyNs = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  allocator_.recordHistory({HistoryRecording::AllocationsOnly, 100, false});
  const std::int64_t before = steadyNs();
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  a.reset();
  const std::int64_t after = steadyNs();
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  const auto& trace = snapshot.device_traces.at(0);
  ASSERT_EQ(trace.size(), 3u);
  constexpr std::int64_t kSlack = 1'000'000;  // 1 ms of conversion error at most
  for (const MemoryTraceEntry& entry : trace) {
    EXPECT_GE(entry.time_ns, before - kSlack);
    EXPECT_LE(entry.time_ns, after + kSlack);
  }
  EXPECT_GE(trace[1].time_ns - trace[0].time_ns, 20'000'000 - kSlack);
}

TEST_F(MemoryHistoryTest, AllocationsOnlySkipsSegmentsAndOffRecordsNothing) {
  allocator_.recordHistory({HistoryRecording::AllocationsOnly, 100, false});
  allocator_.allocate(0, 4 * kKiB, stream(0)).reset();
  EXPECT_EQ(
      actions(allocator_.snapshot({.device = 0})),
      (std::vector<Action>{Action::Alloc, Action::FreeRequested, Action::FreeCompleted}));
  allocator_.recordHistory({HistoryRecording::Off, 0, false});
  allocator_.allocate(0, 4 * kKiB, stream(0)).reset();
  EXPECT_TRUE(actions(allocator_.snapshot({.device = 0})).empty());
  EXPECT_THROW(allocator_.recordHistory({HistoryRecording::All, 0, false}),
               InvalidArgument);
}

TEST_F(MemoryHistoryTest, StateKeepsLiveBlockStacksWithoutATrace) {
  allocator_.recordHistory({HistoryRecording::State, 100, true});
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream(0));
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  EXPECT_TRUE(snapshot.device_traces.at(0).empty());
  ASSERT_EQ(snapshot.segments.size(), 1u);
  const MemoryBlock& block = snapshot.segments[0].blocks.at(0);
  EXPECT_EQ(block.state, MemoryBlock::State::Allocated);
  ASSERT_FALSE(block.frames.empty());
  for (const MemoryFrame& frame : block.frames) EXPECT_FALSE(frame.name.empty());
  // The allocator's exported entry point or the test itself is on the stack.
  bool found_caller = false;
  for (const MemoryFrame& frame : block.frames) {
    if (frame.filename.find("memory_history_test") != std::string::npos ||
        frame.name.find("CachingAllocator::allocate") != std::string::npos) {
      found_caller = true;
    }
  }
  EXPECT_TRUE(found_caller);
}

TEST_F(MemoryHistoryTest, RingKeepsTheNewestEntriesWhenItWraps) {
  allocator_.recordHistory({HistoryRecording::AllocationsOnly, 4, false});
  std::vector<std::size_t> sizes;
  for (std::size_t i = 1; i <= 5; ++i) {
    DataPtr block = allocator_.allocate(0, i * kKiB, stream(0));
    sizes.push_back(i * kKiB);
  }
  // 15 events (alloc, free_requested, free_completed per block); the last 4.
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  ASSERT_EQ(actions(snapshot),
            (std::vector<Action>{Action::FreeCompleted, Action::Alloc,
                                 Action::FreeRequested, Action::FreeCompleted}));
  EXPECT_EQ(snapshot.device_traces[0][0].size, 4 * kKiB);
  EXPECT_EQ(snapshot.device_traces[0][1].size, 5 * kKiB);
  // Shrinking the ring keeps the newest.
  allocator_.recordHistory({HistoryRecording::AllocationsOnly, 2, false});
  EXPECT_EQ(actions(allocator_.snapshot({.device = 0})),
            (std::vector<Action>{Action::FreeRequested, Action::FreeCompleted}));
}

// Same-size pairs take the allocator's fast path, which writes its trace
// entries in place once the ring is full: they must read as any others.
TEST_F(MemoryHistoryTest, SameSizePairsAreTracedInOrderOnceTheRingIsFull) {
  allocator_.recordHistory({HistoryRecording::All, 5, false});
  // segment_alloc, alloc, free_requested, free_completed: then 3 x 3 more.
  allocator_.allocate(0, 4 * kKiB, stream(2)).reset();
  void* address = nullptr;
  for (std::size_t i = 0; i < 3; ++i) {
    DataPtr block = allocator_.allocate(0, 4 * kKiB - i, stream(2));
    if (address != nullptr) {
      EXPECT_EQ(block.get(), address) << "the held block comes back";
    }
    address = block.get();
  }
  // The snapshot itself adds its "snapshot" event last.
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  ASSERT_EQ(
      actions(snapshot),
      (std::vector<Action>{Action::FreeCompleted, Action::Alloc, Action::FreeRequested,
                           Action::FreeCompleted, Action::Snapshot}));
  std::int64_t previous_time = 0;
  const auto& trace = snapshot.device_traces[0];
  for (auto entry = trace.begin(); entry != trace.end() - 1; ++entry) {
    EXPECT_EQ(entry->address, reinterpret_cast<std::uintptr_t>(address));
    EXPECT_EQ(entry->size, 4 * kKiB);
    EXPECT_EQ(entry->stream, stream(2));
    EXPECT_GE(entry->time_ns, previous_time);
    previous_time = entry->time_ns;
  }
}

TEST_F(MemoryHistoryTest, OutOfMemoryIsRecorded) {
  testing::FakeSegmentSource source(4 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  allocator.recordHistory({HistoryRecording::All, 10, false});
  EXPECT_THROW((void)allocator.allocate(0, 8 * kMiB, stream(0)), OutOfMemory);
  const MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  ASSERT_EQ(actions(snapshot), (std::vector<Action>{Action::Oom, Action::Snapshot}));
  EXPECT_EQ(snapshot.device_traces[0][0].device_free, 4 * kMiB);
}

TEST_F(MemoryHistoryTest, SnapshotAgreesWithTheStats) {
  std::vector<DataPtr> live;
  for (std::size_t i = 0; i < 40; ++i) {
    live.push_back(allocator_.allocate(0, (i % 7 + 1) * 300 * kKiB + i, stream(i % 3)));
  }
  for (std::size_t i = 0; i < live.size(); i += 3) live[i].reset();
  const MemorySnapshot snapshot =
      allocator_.snapshot({.device = 0, .include_trace = false});
  const MemoryStats stats = allocator_.stats(0);
  std::int64_t reserved = 0, allocated = 0, requested = 0, blocks = 0;
  for (const MemorySegment& segment : snapshot.segments) {
    reserved += static_cast<std::int64_t>(segment.total_size);
    allocated += static_cast<std::int64_t>(segment.allocated_size);
    requested += static_cast<std::int64_t>(segment.requested_size);
    std::uint64_t next = segment.address;
    for (const MemoryBlock& block : segment.blocks) {
      EXPECT_EQ(block.address, next);  // blocks tile the segment
      next += block.size;
      if (block.state == MemoryBlock::State::Allocated) ++blocks;
    }
    EXPECT_EQ(next, segment.address + segment.total_size);
  }
  EXPECT_EQ(reserved, stats.reserved_bytes.current);
  EXPECT_EQ(allocated, stats.allocated_bytes.current);
  EXPECT_EQ(requested, stats.requested_bytes.current);
  EXPECT_EQ(blocks, stats.allocations.current);
}

}  // namespace
}  // namespace accel::memory
