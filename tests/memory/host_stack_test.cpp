// Host-language stacks in memory history (MemoryHistoryOptions::
// capture_host_stack): captured at allocation without the device lock held,
// resolved only when a snapshot is taken, put before the C++ frames.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::kKiB;

using testing::stream0;

// A host stack of one frame naming `line`, counting its resolutions.
class FakeHostStack : public HostStack {
 public:
  FakeHostStack(int line, std::atomic<int>& resolved)
      : line_(line), resolved_(resolved) {}
  [[nodiscard]] std::vector<MemoryFrame> frames() const override {
    resolved_.fetch_add(1);
    return {MemoryFrame{"train_step", "model.py", line_}};
  }

 private:
  int line_;
  std::atomic<int>& resolved_;
};

class HostStackTest : public ::testing::Test {
 protected:
  testing::FakeSegmentSource source_{std::size_t{1} << 30};
  CachingAllocator allocator_{DeviceType::CUDA, 1, source_};
  std::atomic<int> captured_{0};
  std::atomic<int> resolved_{0};
  int next_line_ = 10;

  MemoryHistoryOptions options(HistoryRecording level, bool native) {
    MemoryHistoryOptions out{level, 100, native};
    out.capture_host_stack = [this]() -> std::shared_ptr<const HostStack> {
      captured_.fetch_add(1);
      // The device lock is not held here: reading the stats takes it.
      (void)allocator_.stats(0);
      return std::make_shared<FakeHostStack>(next_line_++, resolved_);
    };
    return out;
  }
};

TEST_F(HostStackTest, LiveBlocksKeepTheHostFramesBeforeTheNativeOnes) {
  allocator_.recordHistory(options(HistoryRecording::State, /*native=*/true));
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream0());
  EXPECT_EQ(captured_.load(), 1);
  EXPECT_EQ(resolved_.load(), 0);  // nothing resolved before a snapshot
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  EXPECT_EQ(resolved_.load(), 1);
  const MemoryBlock* live = nullptr;
  for (const MemorySegment& segment : snapshot.segments)
    for (const MemoryBlock& block : segment.blocks)
      if (block.state == MemoryBlock::State::Allocated) live = &block;
  ASSERT_NE(live, nullptr);
  ASSERT_GE(live->frames.size(), 2u);  // the host frame, then C++ frames
  EXPECT_EQ(live->frames[0], (MemoryFrame{"train_step", "model.py", 10}));
  EXPECT_EQ(live->host_stack, nullptr);  // resolved for the caller
}

TEST_F(HostStackTest, HostOnlyRecordsNoNativeFramesAndTracesTheAllocation) {
  allocator_.recordHistory(options(HistoryRecording::All, /*native=*/false));
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream0());
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream0());
  const MemorySnapshot snapshot = allocator_.snapshot({.device = 0});
  int allocs = 0;
  for (const MemoryTraceEntry& entry : snapshot.device_traces.at(0)) {
    if (entry.action != MemoryTraceEntry::Action::Alloc) continue;
    ASSERT_EQ(entry.frame_details.size(), 1u);
    EXPECT_EQ(entry.frame_details[0].line, 10 + allocs);
    EXPECT_EQ(entry.frames.at(0),
              "train_step (model.py:" + std::to_string(10 + allocs) + ")");
    ++allocs;
  }
  EXPECT_EQ(allocs, 2);
  EXPECT_EQ(captured_.load(), 2);
}

TEST_F(HostStackTest, TurningHistoryOffStopsCapturing) {
  allocator_.recordHistory(options(HistoryRecording::All, false));
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream0());
  allocator_.recordHistory({HistoryRecording::Off, 100, false});
  DataPtr b = allocator_.allocate(0, 4 * kKiB, stream0());
  EXPECT_EQ(captured_.load(), 1);
}

TEST_F(HostStackTest, ACaptureThatThrowsLosesTheStackNotTheAllocation) {
  MemoryHistoryOptions throwing{HistoryRecording::State, 100, false};
  throwing.capture_host_stack = []() -> std::shared_ptr<const HostStack> {
    throw std::runtime_error("no stack");
  };
  allocator_.recordHistory(throwing);
  DataPtr a = allocator_.allocate(0, 4 * kKiB, stream0());
  EXPECT_NE(a.get(), nullptr);
}

}  // namespace
}  // namespace accel::memory
