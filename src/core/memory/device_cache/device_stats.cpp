// DeviceCache: the figures — statistics, peaks — and the out-of-memory path
// (its report: out_of_memory_report.h).
#include <algorithm>
#include <cstdio>
#include <string>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/memory/size_rules.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

MemoryStats DeviceCache::stats() {
  BiasedMutex::Guard lock(mutex_);
  releaseAllHeld();
  MemoryStats out = stats_;
  block_stats_.writeTo(out);
  return out;
}

void DeviceCache::resetPeakStats() {
  BiasedMutex::Guard lock(mutex_);
  releaseAllHeld();
  stats_.resetPeaks();
  block_stats_.resetPeaks();
}

void DeviceCache::resetAccumulatedStats() {
  BiasedMutex::Guard lock(mutex_);
  releaseAllHeld();  // thread caches' figures first, so that none predates the reset
  stats_.resetAccumulated();
  block_stats_.resetAccumulated();
}

void DeviceCache::failAsOutOfMemory(std::size_t bytes, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  if (set_aside_pending_) setAsideInherited();
  releaseAllHeld();
  const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
  // The retry a real shortage gets: the cache is given back, then the device
  // (which refuses this request) is asked again.
  ++stats_.num_alloc_retries;
  if (settings_.max_split_size > 0) (void)releaseCached(true);
  synchronizeEvents();
  (void)releaseCached(false);
  raiseOutOfMemory(lock, std::max(rounded, bytes), stream);
}

void DeviceCache::raiseOutOfMemory(BiasedMutex::Guard& lock, std::size_t rounded,
                                   StreamId stream) {
  releaseAllHeld();  // the facts count every thread's cached blocks as free
  ++stats_.num_ooms;
  const OutOfMemoryReport report(
      OutOfMemoryScene{.device = Device::unchecked(allocator_.deviceType(), index_),
                       .stream = stream,
                       .requested = rounded,
                       .memory = source_.memoryInfo(index_),
                       .cap = cap_,
                       .reserved_bytes = stats_.reserved_bytes.current,
                       .allocated_bytes = block_stats_.allocatedBytes(),
                       .segments = &segments_,
                       .expandable_segments = settings_.expandable_segments,
                       .max_split_size = settings_.max_split_size,
                       .maps_pages = source_.pageSize() > 0});
  history_.record(MemoryTraceEntry::Action::Oom, nullptr, 0, rounded, stream,
                  report.facts().device_free_bytes);
  lock.unlock();
  report.raise(oom_sink_);
}

}  // namespace accel::memory::detail
