// DeviceCache: its side of the history (history_recorder.h) — options
// applied with every thread cache claimed, the host stack captured with the
// lock released, and the snapshot event.
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::recordHistory(const MemoryHistoryOptions& options) {
  BiasedMutex::Guard lock(mutex_);
  ClaimedThreadCaches claimed(*this);  // a recording history stops them
  history_.configure(options);
  updatePlain();
  updateLocalOk();
}

void DeviceCache::captureHostStack(BiasedMutex::Guard& lock) {
  HostStackCapture capture = history_.hostCapture();
  lock.unlock();
  std::shared_ptr<const HostStack> stack;
  try {
    stack = capture();
  } catch (...) {
    // History is best effort: a failed capture must not fail an allocation.
  }
  lock.relock();
  history_.holdHostStack(std::move(stack));
}

void DeviceCache::noteSnapshot() {
  BiasedMutex::Guard lock(mutex_);
  if (history_.level() == HistoryRecording::All) {
    history_.record(MemoryTraceEntry::Action::Snapshot, nullptr, 0, 0, kDefaultStreamId);
  }
}

}  // namespace accel::memory::detail
