// HistoryRecorder: the ring, what each level keeps, and the snapshot's view
// of it (history_recorder.h).
#include "memory/device_cache/history_recorder.h"

#include <algorithm>

namespace accel::memory::detail {

using Action = MemoryTraceEntry::Action;

void HistoryRecorder::configure(const MemoryHistoryOptions& options) {
  level_ = options.enabled;
  const bool on = options.enabled != HistoryRecording::Off;
  native_stacks_ = options.record_stack && on;
  host_capture_ = on ? options.capture_host_stack : HostStackCapture{};
  pending_host_stack_.reset();
  stacks_ = native_stacks_ || static_cast<bool>(host_capture_);
  if (options.enabled == HistoryRecording::Off) {
    ring_.clear();
    ring_.shrink_to_fit();
    capacity_ = 0;
    next_ = 0;
    return;
  }
  const std::size_t capacity = options.max_entries;
  if (capacity != capacity_) {
    // Keep the newest entries that fit, in order.
    std::vector<TraceRecord> kept;
    const std::size_t count = ring_.size();
    const std::size_t take = std::min(count, capacity);
    kept.reserve(take);
    for (std::size_t i = count - take; i < count; ++i) {
      kept.push_back(std::move(ring_[(next_ + i) % count]));
    }
    ring_ = std::move(kept);
    next_ = 0;
    capacity_ = capacity;
  }
}

void HistoryRecorder::record(Action action, const Block* block, std::uint64_t address,
                             std::uint64_t size, StreamId stream,
                             std::uint64_t device_free, std::int64_t stamp) noexcept {
  if (level_ == HistoryRecording::Off || level_ == HistoryRecording::State ||
      capacity_ == 0) {
    return;
  }
  if (level_ == HistoryRecording::AllocationsOnly &&
      (action != Action::Alloc && action != Action::FreeRequested &&
       action != Action::FreeCompleted && action != Action::Oom)) {
    return;
  }
  try {
    // Filled in place: the ring's oldest entry is reused, with no temporary.
    TraceRecord* slot = nullptr;
    if (ring_.size() < capacity_) {
      slot = &ring_.emplace_back();
    } else {
      slot = &ring_[next_];
      if (++next_ == capacity_) next_ = 0;
    }
    TraceRecord& entry = *slot;
    entry.action = action;
    entry.address = address;
    entry.size = size;
    entry.stream = stream;
    entry.stamp = stamp != 0 ? stamp : clock_.now();
    entry.device_free = device_free;
    if (stacks_) {
      entry.stack = (block != nullptr && block->stack) ? block->stack
                                                       : captureStack(3, native_stacks_);
    } else {
      entry.stack.reset();
    }
  } catch (...) {
    // History is best effort: losing an entry must not fail an allocation.
  }
}

// A trace entry of the fast paths. Both levels that trace (all, allocations
// only) keep their three actions, and the fast paths capture no stacks: once
// the ring is full (its steady state) an entry is written in place; until
// then record() grows it.
[[gnu::always_inline]] inline void HistoryRecorder::append(Action action,
                                                           const Block* block,
                                                           std::int64_t stamp) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  if (ring_.size() != capacity_) [[unlikely]] {
    record(action, nullptr, address, block->size, block->stream, 0, stamp);
    return;
  }
  TraceRecord& entry = ring_[next_];
  if (++next_ == capacity_) next_ = 0;
  entry.action = action;
  entry.address = address;
  entry.size = block->size;
  entry.stream = block->stream;
  entry.stamp = stamp;
  entry.device_free = 0;
  entry.stack.reset();
}

// Out of line, so that a pair without history pays one test for them.
[[gnu::noinline]] void HistoryRecorder::traceAllocation(const Block* block) noexcept {
  append(Action::Alloc, block, clock_.now());
}

[[gnu::noinline]] void HistoryRecorder::traceFree(const Block* block) noexcept {
  const std::int64_t now = clock_.now();  // one clock read for both events
  append(Action::FreeRequested, block, now);
  append(Action::FreeCompleted, block, now);
}

void HistoryRecorder::appendTo(std::vector<MemoryTraceEntry>& out, Device device) {
  const std::size_t count = ring_.size();
  out.reserve(out.size() + count);
  const std::size_t start = count < capacity_ ? 0 : next_;
  const TraceClock::Scale scale = clock_.scale();
  for (std::size_t i = 0; i < count; ++i) {
    const TraceRecord& record = ring_[(start + i) % count];
    MemoryTraceEntry entry;
    entry.action = record.action;
    entry.address = record.address;
    entry.size = record.size;
    entry.stream = Stream(device, record.stream);
    entry.time_ns = scale.toNs(record.stamp);
    entry.device_free = record.device_free;
    entry.frame_details = symbolizer_.symbolize(record.stack);
    if (record.stack) entry.host_stack = record.stack->host;
    for (const MemoryFrame& frame : entry.frame_details) {
      entry.frames.push_back(frame.name + " (" + frame.filename + ")");
    }
    out.push_back(std::move(entry));
  }
}

}  // namespace accel::memory::detail
