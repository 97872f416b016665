// HistoryRecorder: a device's memory history (recordMemoryHistory) — what is
// recorded at each level, the ring of trace entries, the clock that stamps
// them, the stacks captured with them and their symbols for a snapshot.
//
// The level decides what is kept: Off nothing; State the allocation stacks
// only (the caller keeps them on its blocks), no trace; AllocationsOnly the
// alloc, free and oom events; All every event (segments, snapshots too).
// The ring keeps the newest max_entries; entries are filled in place, so a
// full ring (its steady state) allocates nothing per event. Timestamps are
// TraceClock ticks, converted to nanoseconds when a snapshot reads them.
//
// The allocator's fast paths test tracing() (a flag they keep a copy of)
// and call traceAllocation / traceFree, out of line so that a pair without
// history pays one test for them.
//
// Thread-safety: none; the owning DeviceCache's lock guards it. The host
// capture is the caller's to call, with its lock released (it may take the
// host's lock): hostCapture, then holdHostStack for the allocation in
// progress.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memory/block.h"
#include "memory/stack_capture.h"
#include "memory/trace_clock.h"

namespace accel::memory::detail {

struct TraceRecord {
  MemoryTraceEntry::Action action;
  std::uint64_t address;
  std::uint64_t size;
  StreamId stream;
  std::int64_t stamp;  // TraceClock ticks, converted when a snapshot reads them
  CapturedStack stack;
  std::uint64_t device_free;
};

class HistoryRecorder {
 public:
  HistoryRecorder() = default;
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  // Applies the options: the level, stacks, host capture, and the ring's
  // capacity (a smaller one keeps the newest entries, in order). Off drops
  // the ring. Throws std::bad_alloc (resizing the ring).
  void configure(const MemoryHistoryOptions& options);

  // Anything is recorded (State included: stacks for blocks).
  [[nodiscard]] bool recording() const noexcept {
    return level_ != HistoryRecording::Off;
  }
  [[nodiscard]] HistoryRecording level() const noexcept { return level_; }
  // The level records alloc and free events (All, AllocationsOnly).
  [[nodiscard]] bool recordsAllocations() const noexcept {
    return level_ == HistoryRecording::All || level_ == HistoryRecording::AllocationsOnly;
  }
  // Trace entries are kept: such a level and a ring to keep them in.
  [[nodiscard]] bool tracing() const noexcept {
    return recordsAllocations() && capacity_ > 0;
  }
  // Allocations keep a stack: C++ return addresses, a host capture, or both.
  [[nodiscard]] bool capturesStacks() const noexcept { return stacks_; }
  [[nodiscard]] bool nativeStacks() const noexcept { return native_stacks_; }
  [[nodiscard]] const HostStackCapture& hostCapture() const noexcept {
    return host_capture_;
  }
  // The host stack the caller captured (unlocked) for the allocation in
  // progress, kept until that allocation takes it.
  void holdHostStack(std::shared_ptr<const HostStack> stack) noexcept {
    pending_host_stack_ = std::move(stack);
  }
  [[nodiscard]] std::shared_ptr<const HostStack> takeHostStack() noexcept {
    return std::move(pending_host_stack_);
  }

  // A timestamp for record (one read shared by the events of one moment).
  [[nodiscard]] std::int64_t now() const noexcept { return clock_.now(); }

  // Adds an event if the level keeps it. `block`'s stack is the entry's when
  // it has one, else the caller's stack is captured (when stacks are on).
  // stamp 0: read the clock. Never fails the caller: an entry that cannot be
  // made is lost.
  void record(MemoryTraceEntry::Action action, const Block* block, std::uint64_t address,
              std::uint64_t size, StreamId stream, std::uint64_t device_free = 0,
              std::int64_t stamp = 0) noexcept;
  // The fast paths' entries, while tracing() and no stacks are captured:
  // alloc; free_requested and free_completed with one clock read.
  void traceAllocation(const Block* block) noexcept;
  void traceFree(const Block* block) noexcept;

  // The entries, oldest first.
  [[nodiscard]] std::size_t size() const noexcept { return ring_.size(); }
  // Appends the entries, oldest first, to `out` as snapshot entries of
  // `device`'s streams, times in steady-clock nanoseconds, stacks
  // symbolized. Throws std::bad_alloc.
  void appendTo(std::vector<MemoryTraceEntry>& out, Device device);
  // The C++ frames of a stack (its host part is resolved later, unlocked).
  [[nodiscard]] std::vector<MemoryFrame> symbolize(const CapturedStack& stack) {
    return symbolizer_.symbolize(stack);
  }

 private:
  void append(MemoryTraceEntry::Action action, const Block* block,
              std::int64_t stamp) noexcept;

  HistoryRecording level_ = HistoryRecording::Off;
  bool stacks_ = false;         // native_stacks_ or a host capture
  bool native_stacks_ = false;  // C++ return addresses (record_stack)
  HostStackCapture host_capture_;
  std::shared_ptr<const HostStack> pending_host_stack_;
  std::size_t capacity_ = 0;
  std::vector<TraceRecord> ring_;
  std::size_t next_ = 0;  // the oldest entry once the ring is full
  StackSymbolizer symbolizer_;
  TraceClock clock_;
};

}  // namespace accel::memory::detail
