// DeviceCache: the history ring (recordMemoryHistory) — what is recorded at
// each level, and the fast paths' own trace entries.
#include <algorithm>
#include <vector>

#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

using Action = MemoryTraceEntry::Action;

void DeviceCache::recordHistory(const MemoryHistoryOptions& options) {
  BiasedMutex::Guard lock(mutex_);
  ClaimedThreadCaches claimed(*this);  // a recording history stops them
  history_level_ = options.enabled;
  const bool on = options.enabled != HistoryRecording::Off;
  native_stacks_ = options.record_stack && on;
  host_capture_ = on ? options.capture_host_stack : HostStackCapture{};
  pending_host_stack_.reset();
  history_stacks_ = native_stacks_ || static_cast<bool>(host_capture_);
  updatePlain();
  updateLocalOk();
  if (options.enabled == HistoryRecording::Off) {
    history_.clear();
    history_.shrink_to_fit();
    history_capacity_ = 0;
    history_next_ = 0;
    return;
  }
  const std::size_t capacity = options.max_entries;
  if (capacity != history_capacity_) {
    // Keep the newest entries that fit, in order.
    std::vector<TraceRecord> kept;
    const std::size_t count = history_.size();
    const std::size_t take = std::min(count, capacity);
    kept.reserve(take);
    for (std::size_t i = count - take; i < count; ++i) {
      kept.push_back(std::move(history_[(history_next_ + i) % count]));
    }
    history_ = std::move(kept);
    history_next_ = 0;
    history_capacity_ = capacity;
  }
  updatePlain();  // tracing_ needs the ring's capacity
}

void DeviceCache::record(Action action, const Block* block, std::uint64_t address,
                         std::uint64_t size, StreamId stream, std::uint64_t device_free,
                         std::int64_t stamp) {
  if (history_level_ == HistoryRecording::Off ||
      history_level_ == HistoryRecording::State || history_capacity_ == 0) {
    return;
  }
  if (history_level_ == HistoryRecording::AllocationsOnly &&
      (action != Action::Alloc && action != Action::FreeRequested &&
       action != Action::FreeCompleted && action != Action::Oom)) {
    return;
  }
  try {
    // Filled in place: the ring's oldest entry is reused, with no temporary.
    TraceRecord* slot = nullptr;
    if (history_.size() < history_capacity_) {
      slot = &history_.emplace_back();
    } else {
      slot = &history_[history_next_];
      if (++history_next_ == history_capacity_) history_next_ = 0;
    }
    TraceRecord& entry = *slot;
    entry.action = action;
    entry.address = address;
    entry.size = size;
    entry.stream = stream;
    entry.stamp = stamp != 0 ? stamp : clock_.now();
    entry.device_free = device_free;
    if (history_stacks_) {
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
void DeviceCache::appendTrace(Action action, const Block* block,
                              std::int64_t stamp) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  if (history_.size() != history_capacity_) [[unlikely]] {
    record(action, nullptr, address, block->size, block->stream, 0, stamp);
    return;
  }
  TraceRecord& entry = history_[history_next_];
  if (++history_next_ == history_capacity_) history_next_ = 0;
  entry.action = action;
  entry.address = address;
  entry.size = block->size;
  entry.stream = block->stream;
  entry.stamp = stamp;
  entry.device_free = 0;
  entry.stack.reset();
}

// The fast paths' trace entries are out of line, so that a pair without
// history pays one test for them.
[[gnu::noinline]] void DeviceCache::traceAllocation(const Block* block) noexcept {
  appendTrace(Action::Alloc, block, clock_.now());
}

[[gnu::noinline]] void DeviceCache::traceFree(const Block* block) noexcept {
  const std::int64_t now = clock_.now();  // one clock read for both events
  appendTrace(Action::FreeRequested, block, now);
  appendTrace(Action::FreeCompleted, block, now);
}

void DeviceCache::captureHostStack(BiasedMutex::Guard& lock) {
  HostStackCapture capture = host_capture_;
  lock.unlock();
  std::shared_ptr<const HostStack> stack;
  try {
    stack = capture();
  } catch (...) {
    // History is best effort: a failed capture must not fail an allocation.
  }
  lock.relock();
  pending_host_stack_ = std::move(stack);
}

void DeviceCache::noteSnapshot() {
  BiasedMutex::Guard lock(mutex_);
  if (history_level_ == HistoryRecording::All) {
    record(Action::Snapshot, nullptr, 0, 0, kDefaultStreamId);
  }
}

}  // namespace accel::memory::detail
