// AllocatorHistory: the caching allocator's events of each traced backend,
// taken from the memory history the core already keeps (memory_hooks.h)
// rather than from new code in the allocator: the trace turns history
// recording on (without stacks) for each backend of the memory_history
// group the first time a traced hook finds it initialised, off again when
// the trace stops, and converts the entries when the trace is written.
// Entries carry steady-clock times, the trace's own timeline.
//
// A program that records its own history (with stacks, say) while tracing
// has its settings replaced by the trace's; docs/tracing.md says so.
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "accel/hooks.h"
#include "layers/trace/trace_json.h"

namespace accel::trace::detail {

class AllocatorHistory {
 public:
  // History entries kept per device (older ones are dropped by the history).
  static constexpr std::size_t kMaxEntries = 200000;

  // Turns recording on for `inner`'s backend once, when it is initialised.
  // One relaxed load when the backend was seen already. Never throws.
  void note(AcceleratorHooks& inner) noexcept {
    const std::uint64_t bit = std::uint64_t{1}
                              << (static_cast<unsigned>(inner.deviceType()) & 63u);
    if ((seen_.load(std::memory_order_relaxed) & bit) != 0) return;
    noteSlow(inner, bit);
  }

  // Appends each recorded device's entries from `origin_ns` on, with the
  // allocated and reserved figures before the first of them; after stop(),
  // what stop() kept. Never throws.
  void collect(std::int64_t origin_ns, std::vector<MemoryTrack>& out) noexcept;

  // Keeps the entries from `origin_ns` on (for writes after the trace
  // stopped), then turns recording off for every backend this turned it on
  // for. Never throws.
  void stop(std::int64_t origin_ns) noexcept;

  // Forgets what a stopped trace kept (a new trace starts). Never throws.
  void clear() noexcept;

 private:
  void noteSlow(AcceleratorHooks& inner, std::uint64_t bit) noexcept;

  std::atomic<std::uint64_t> seen_{0};
  std::mutex mutex_;
  std::vector<AcceleratorHooks*> recording_;
  std::vector<MemoryTrack> kept_;  // by stop()
};

}  // namespace accel::trace::detail
