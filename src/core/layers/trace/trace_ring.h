// TraceRing: the bounded, lock-free store of a trace's events.
//
// A ring of `capacity` slots (a power of two). A writer takes the next
// sequence number with one fetch_add and fills the slot it maps to, the
// oldest event there being overwritten: memory stays bounded however long
// the program runs, and the number of events lost is known exactly from the
// sequence numbers. Each slot is a sequence lock whose words are relaxed
// atomics, so a reader (the trace writer, at any time) copies a slot without
// stopping writers and drops a slot that changed while it read; every field
// being atomic keeps that free of data races (TSan checks it).
//
// A writer takes its slot with one compare-and-swap, from a whole event of
// an older sequence only, so two writers never write one slot at once. The
// swap fails only when a writer was held up inside the slot while
// `capacity` events went by (or a later one already took it): this event is
// then lost, and counted as dropped like an overwritten one.
//
// Thread-safety: push and collect may run concurrently from any threads;
// reset must not run concurrently with push (the recorder stops first).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "layers/trace/trace_event.h"

namespace accel::trace::detail {

class TraceRing {
 public:
  // `capacity` rounded up to a power of two, at least 1024.
  explicit TraceRing(std::size_t capacity);

  void push(const TraceEvent& event) noexcept;

  struct Contents {
    std::vector<TraceEvent> events;  // oldest first
    std::uint64_t dropped = 0;       // overwritten, or being written while read
  };
  // The events pushed since the last reset that are still in the ring.
  [[nodiscard]] Contents collect() const;

  // Forgets every event (the next collect starts from here).
  void reset() noexcept { first_ = next_.load(std::memory_order_acquire); }

  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }
  // What a ring made for `capacity` holds.
  [[nodiscard]] static std::size_t roundedCapacity(std::size_t capacity) noexcept;

 private:
  static constexpr int kWords = 9;
  struct Slot {
    // 2 * sequence + 2 once the event of `sequence` is whole; odd while written.
    std::atomic<std::uint64_t> lock{0};
    std::atomic<std::uint64_t> words[kWords];
  };

  std::size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<std::uint64_t> next_{0};
  std::uint64_t first_ = 0;
};

}  // namespace accel::trace::detail
