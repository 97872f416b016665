// PendingFrees: the blocks a device cache may not reuse yet because streams
// other than their own used them (recordStream), and the events that say
// when those streams' work on them is done.
//
// A block freed after other streams used it gets one event per such stream,
// recorded at the free; it returns to the cache when its last event has
// completed. The events are kept in recording order, and processing stops at
// the first one not yet reached: an event recorded later on the same stream
// cannot be done either, so the scan stays short. What "returns to the
// cache" means is the caller's: processCompleted and synchronizeAll hand each
// block whose events are all done to a callback (inlined into the caller's
// path, no call through a pointer).
//
// Invariant: a block is in the list once per event recorded for it, and its
// event_count is at least that number (one more, for good, when an event
// could not be recorded: such a block never comes back).
//
// Thread-safety: none; the owning DeviceCache's lock guards it. Lifetime: the
// SegmentSource must outlive it.
#pragma once

#include <deque>
#include <utility>

#include "accel/memory/segment_source.h"
#include "memory/block.h"

namespace accel::memory::detail {

class PendingFrees {
 public:
  // Events of `device`'s streams, recorded and queried through `source`.
  PendingFrees(SegmentSource& source, Device device) noexcept
      : source_(source), device_(device) {}
  PendingFrees(const PendingFrees&) = delete;
  PendingFrees& operator=(const PendingFrees&) = delete;

  [[nodiscard]] bool empty() const noexcept { return events_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return events_.size(); }

  // Records one event on each of `block`'s stream uses and clears them. If
  // an event cannot be recorded, the block cannot be proven idle: it keeps
  // its stream uses and one count more than the events recorded, so that it
  // never returns (leaked rather than reused too early). Never throws.
  void recordFor(Block* block) noexcept;

  // Releases the events that have completed, oldest first, up to the first
  // that has not; done(block) for each block whose last event that was.
  template <typename Done>
  void processCompleted(Done&& done) noexcept {
    while (!events_.empty()) {
      auto [event, block] = events_.front();
      if (!source_.eventCompleted(event)) break;
      events_.pop_front();
      source_.releaseEvent(event);
      if (--block->event_count == 0) done(block);
    }
  }

  // Waits for every event (the device's retries before OutOfMemory,
  // emptyCache), calling done(block) as processCompleted does. Returns
  // whether there was anything to wait for. Throws what the source's
  // synchronizeEvent throws (the events not yet waited for stay).
  template <typename Done>
  bool synchronizeAll(Done&& done) {
    if (events_.empty()) return false;
    while (!events_.empty()) {
      auto [event, block] = events_.front();
      source_.synchronizeEvent(event);
      events_.pop_front();
      source_.releaseEvent(event);
      if (--block->event_count == 0) done(block);
    }
    return true;
  }

  // Drops the events whose block `forget(block)` names, without querying or
  // releasing them (a fork child's events recorded by its parent). Their
  // blocks stay pending for good.
  template <typename Forget>
  void forgetIf(Forget&& forget) noexcept {
    std::erase_if(events_, [&](const std::pair<EventId, Block*>& pending) {
      return forget(pending.second);
    });
  }

  // As the device goes: releases every event whose block `owned(block)`
  // names (the others are not this process's to release) and forgets all.
  template <typename Owned>
  void releaseAll(Owned&& owned) noexcept {
    for (const auto& [event, block] : events_) {
      if (owned(block)) source_.releaseEvent(event);
    }
    events_.clear();
  }

 private:
  SegmentSource& source_;
  const Device device_;
  std::deque<std::pair<EventId, Block*>> events_;  // in recording order
};

}  // namespace accel::memory::detail
