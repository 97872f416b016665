#include "layers/trace/allocator_history.h"

#include <utility>

namespace accel::trace::detail {
namespace {

// How an entry changes the allocated and reserved figures.
std::pair<std::int64_t, std::int64_t> changeOf(const MemoryTraceEntry& entry) noexcept {
  using Action = MemoryTraceEntry::Action;
  const auto size = static_cast<std::int64_t>(entry.size);
  switch (entry.action) {
    case Action::Alloc:
      return {size, 0};
    case Action::FreeCompleted:
      return {-size, 0};
    case Action::SegmentAlloc:
    case Action::SegmentMap:
      return {0, size};
    case Action::SegmentFree:
    case Action::SegmentUnmap:
      return {0, -size};
    default:
      return {0, 0};
  }
}

}  // namespace

void AllocatorHistory::noteSlow(AcceleratorHooks& inner, std::uint64_t bit) noexcept {
  if (!inner.isInitialized()) return;  // asked again on a later hook
  std::lock_guard lock(mutex_);
  if ((seen_.load(std::memory_order_relaxed) & bit) != 0) return;
  seen_.fetch_or(bit, std::memory_order_relaxed);
  if (!inner.supports(HookGroup::MemoryHistory)) return;
  try {
    MemoryHistoryOptions options;
    options.enabled = HistoryRecording::All;
    options.max_entries = kMaxEntries;
    options.record_stack = false;
    inner.recordMemoryHistory(options);
    recording_.push_back(&inner);
  } catch (...) {
    // A backend whose history refuses: its allocations come from the
    // layer's allocated/freed events instead (trace_json.h).
  }
}

void AllocatorHistory::collect(std::int64_t origin_ns,
                               std::vector<MemoryTrack>& out) noexcept {
  std::vector<AcceleratorHooks*> backends;
  try {
    std::lock_guard lock(mutex_);
    backends = recording_;
    out.insert(out.end(), kept_.begin(), kept_.end());
  } catch (...) {
    return;
  }
  for (AcceleratorHooks* inner : backends) {
    try {
      MemorySnapshotOptions options;
      options.all_devices = true;
      options.include_trace = true;
      MemorySnapshot snapshot = inner->memorySnapshot(options);
      for (std::size_t device = 0; device < snapshot.device_traces.size(); ++device) {
        std::vector<MemoryTraceEntry>& entries = snapshot.device_traces[device];
        MemoryTrack track;
        track.type = inner->deviceType();
        track.device = static_cast<DeviceIndex>(device);
        // The figures now, walked back over the entries kept: the figures
        // before the first of them, even when the history dropped older ones.
        const MemoryStats stats = inner->memoryStats(track.device);
        std::int64_t allocated = stats.allocated_bytes.current;
        std::int64_t reserved = stats.reserved_bytes.current;
        for (MemoryTraceEntry& entry : entries) {
          if (entry.time_ns < origin_ns) continue;
          entry.frames.clear();
          entry.frame_details.clear();
          entry.host_stack.reset();
          const auto [a, r] = changeOf(entry);
          allocated -= a;
          reserved -= r;
          track.entries.push_back(std::move(entry));
        }
        if (track.entries.empty()) continue;
        track.base_allocated = allocated;
        track.base_reserved = reserved;
        out.push_back(std::move(track));
      }
    } catch (...) {
      // A backend that cannot give its history now: its device tracks go
      // without the allocator's curve.
    }
  }
}

void AllocatorHistory::stop(std::int64_t origin_ns) noexcept {
  std::vector<MemoryTrack> kept;
  collect(origin_ns, kept);
  std::lock_guard lock(mutex_);
  kept_ = std::move(kept);
  for (AcceleratorHooks* inner : recording_) {
    try {
      inner->recordMemoryHistory(MemoryHistoryOptions{HistoryRecording::Off});
    } catch (...) {
    }
  }
  recording_.clear();
  seen_.store(0, std::memory_order_relaxed);
}

void AllocatorHistory::clear() noexcept {
  std::lock_guard lock(mutex_);
  kept_.clear();
}

}  // namespace accel::trace::detail
