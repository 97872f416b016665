// HistoryRecorder (src/core/memory/device_cache/history_recorder.h) on its
// own: what each level keeps, the ring's order when it wraps and when its
// capacity changes, the fast paths' entries, and stacks.
#include <gtest/gtest.h>

#include <vector>

#include "memory/device_cache/history_recorder.h"

namespace accel::memory::detail {
namespace {

using Action = MemoryTraceEntry::Action;
const Device kHistoryDevice = Device::unchecked(DeviceType::CUDA, 1);

struct Seen {
  Action action;
  std::uint64_t address;
  std::uint64_t size;
  bool operator==(const Seen&) const = default;
};

std::vector<MemoryTraceEntry> entries(HistoryRecorder& history) {
  std::vector<MemoryTraceEntry> out;
  history.appendTo(out, kHistoryDevice);
  return out;
}

std::vector<Seen> seen(HistoryRecorder& history) {
  std::vector<Seen> out;
  for (const MemoryTraceEntry& entry : entries(history))
    out.push_back({entry.action, entry.address, entry.size});
  return out;
}

void recordSegments(HistoryRecorder& history, std::uint64_t first, std::uint64_t count) {
  for (std::uint64_t i = first; i < first + count; ++i)
    history.record(Action::SegmentAlloc, nullptr, i, 10 * i, 0);
}

TEST(HistoryRecorderTest, OffAndStateKeepNoTrace) {
  HistoryRecorder history;
  EXPECT_FALSE(history.recording());
  recordSegments(history, 1, 2);
  EXPECT_EQ(history.size(), 0u);
  history.configure({HistoryRecording::State, 10, false});
  EXPECT_TRUE(history.recording());
  EXPECT_FALSE(history.recordsAllocations());
  EXPECT_FALSE(history.tracing());
  history.record(Action::Alloc, nullptr, 1, 512, 0);
  EXPECT_EQ(history.size(), 0u);
}

TEST(HistoryRecorderTest, AllKeepsEveryEventInOrderOnTheDevicesStreams) {
  HistoryRecorder history;
  history.configure({HistoryRecording::All, 10, false});
  EXPECT_TRUE(history.tracing());
  history.record(Action::SegmentAlloc, nullptr, 0x1000, 2048, 3);
  history.record(Action::Alloc, nullptr, 0x1000, 512, 3);
  history.record(Action::Oom, nullptr, 0, 4096, 0, /*device_free=*/77);
  const std::vector<MemoryTraceEntry> out = entries(history);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].action, Action::SegmentAlloc);
  EXPECT_EQ(out[0].stream, Stream(kHistoryDevice, 3));
  EXPECT_EQ(out[1].action, Action::Alloc);
  EXPECT_EQ(out[1].size, 512u);
  EXPECT_EQ(out[2].device_free, 77u);
  EXPECT_LE(out[0].time_ns, out[1].time_ns);
  EXPECT_LE(out[1].time_ns, out[2].time_ns);
  EXPECT_TRUE(out[0].frame_details.empty());  // no stacks asked for
}

TEST(HistoryRecorderTest, AllocationsOnlyKeepsAllocFreeAndOom) {
  HistoryRecorder history;
  history.configure({HistoryRecording::AllocationsOnly, 10, false});
  history.record(Action::SegmentAlloc, nullptr, 1, 1, 0);
  history.record(Action::Alloc, nullptr, 2, 2, 0);
  history.record(Action::FreeRequested, nullptr, 2, 2, 0);
  history.record(Action::FreeCompleted, nullptr, 2, 2, 0);
  history.record(Action::SegmentFree, nullptr, 1, 1, 0);
  history.record(Action::Snapshot, nullptr, 0, 0, 0);
  history.record(Action::Oom, nullptr, 0, 3, 0);
  EXPECT_EQ(seen(history), (std::vector<Seen>{{Action::Alloc, 2, 2},
                                              {Action::FreeRequested, 2, 2},
                                              {Action::FreeCompleted, 2, 2},
                                              {Action::Oom, 0, 3}}));
}

TEST(HistoryRecorderTest, AFullRingKeepsTheNewestInOrder) {
  HistoryRecorder history;
  history.configure({HistoryRecording::All, 3, false});
  recordSegments(history, 1, 5);
  EXPECT_EQ(seen(history), (std::vector<Seen>{{Action::SegmentAlloc, 3, 30},
                                              {Action::SegmentAlloc, 4, 40},
                                              {Action::SegmentAlloc, 5, 50}}));
}

TEST(HistoryRecorderTest, ANewCapacityKeepsTheNewestEntriesThatFit) {
  HistoryRecorder history;
  history.configure({HistoryRecording::All, 4, false});
  recordSegments(history, 1, 6);  // wrapped: 3 4 5 6
  history.configure({HistoryRecording::All, 2, false});
  EXPECT_EQ(seen(history), (std::vector<Seen>{{Action::SegmentAlloc, 5, 50},
                                              {Action::SegmentAlloc, 6, 60}}));
  history.configure({HistoryRecording::All, 8, false});
  recordSegments(history, 7, 1);
  EXPECT_EQ(seen(history), (std::vector<Seen>{{Action::SegmentAlloc, 5, 50},
                                              {Action::SegmentAlloc, 6, 60},
                                              {Action::SegmentAlloc, 7, 70}}));
  history.configure({HistoryRecording::Off});
  EXPECT_EQ(history.size(), 0u);
  EXPECT_FALSE(history.tracing());
}

TEST(HistoryRecorderTest, TheFastPathsEntriesFillAndThenOverwriteTheRing) {
  HistoryRecorder history;
  history.configure({HistoryRecording::All, 4, false});
  Block block;
  block.ptr = reinterpret_cast<std::byte*>(0x2000);
  block.size = 1024;
  block.stream = 5;
  history.traceAllocation(&block);  // the ring grows
  history.traceFree(&block);
  history.traceAllocation(&block);  // full: written in place from here
  history.traceFree(&block);
  const std::vector<MemoryTraceEntry> out = entries(history);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].action, Action::FreeCompleted);  // the first two were overwritten
  EXPECT_EQ(out[1].action, Action::Alloc);
  EXPECT_EQ(out[2].action, Action::FreeRequested);
  EXPECT_EQ(out[3].action, Action::FreeCompleted);
  EXPECT_EQ(out[2].time_ns, out[3].time_ns);  // one clock read for the free
  EXPECT_EQ(out[3].address, 0x2000u);
  EXPECT_EQ(out[3].size, 1024u);
  EXPECT_EQ(out[3].stream, Stream(kHistoryDevice, 5));
}

TEST(HistoryRecorderTest, StacksAreCapturedOrTakenFromTheBlock) {
  HistoryRecorder history;
  history.configure({HistoryRecording::All, 4, /*record_stack=*/true});
  EXPECT_TRUE(history.capturesStacks());
  EXPECT_TRUE(history.nativeStacks());
  history.record(Action::SegmentAlloc, nullptr, 1, 1, 0);
  Block block;
  block.setStack(captureStack(0));
  const std::size_t block_frames = block.stack->addresses.size();
  history.record(Action::Alloc, &block, 2, 2, 0);
  const std::vector<MemoryTraceEntry> out = entries(history);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].frame_details.empty());
  EXPECT_EQ(out[1].frame_details.size(), block_frames);
  EXPECT_EQ(out[1].frames.size(), block_frames);
}

TEST(HistoryRecorderTest, AHostCaptureMeansStacksAndItsStackIsHeldOnce) {
  struct OneFrame final : HostStack {
    std::vector<MemoryFrame> frames() const override { return {MemoryFrame{}}; }
  };
  HistoryRecorder history;
  MemoryHistoryOptions options{HistoryRecording::State, 4, false};
  options.capture_host_stack = [] { return std::make_shared<OneFrame>(); };
  history.configure(options);
  EXPECT_TRUE(history.capturesStacks());
  EXPECT_FALSE(history.nativeStacks());
  ASSERT_TRUE(static_cast<bool>(history.hostCapture()));
  history.holdHostStack(history.hostCapture()());
  EXPECT_NE(history.takeHostStack(), nullptr);
  EXPECT_EQ(history.takeHostStack(), nullptr);  // taken by one allocation only
  history.configure({HistoryRecording::Off});
  EXPECT_FALSE(history.capturesStacks());
  EXPECT_FALSE(static_cast<bool>(history.hostCapture()));
}

}  // namespace
}  // namespace accel::memory::detail
