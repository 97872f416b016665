// DeviceCache: the figures — statistics, peaks, and the out-of-memory path
// with its report (the facts the observers get and the message that tells the
// user what to change).
#include <algorithm>
#include <cstdio>
#include <string>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/memory/size_rules.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {
namespace {

using Action = MemoryTraceEntry::Action;

std::string formatBytes(std::size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%zu B", bytes);
  } else {
    std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  }
  return text;
}

// What the capacity in an out-of-memory message is when the allocator caps
// it: the cap, the fraction it was set as, and that a cap of 0 allows nothing.
std::string capText(const ReserveCap& cap) {
  if (!cap.capped) return {};
  std::string text = " (the allocator's limit";
  if (cap.fraction) {
    text += accel::detail::concat(": ", hookInfo(HookId::setMemoryFraction).name, "(",
                                  *cap.fraction, ") of ", formatBytes(cap.fraction_of));
  }
  if (cap.bytes == 0) text += "; it allows no allocation";
  return text + ")";
}

}  // namespace

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
  const OutOfMemoryEvent facts = outOfMemoryFacts(rounded, stream);
  history_.record(Action::Oom, nullptr, 0, rounded, stream, facts.device_free_bytes);
  const std::string message = outOfMemoryMessage(facts);
  lock.unlock();
  allocator_.notifyOutOfMemory(facts);
  throw OutOfMemory(message);
}

OutOfMemoryEvent DeviceCache::outOfMemoryFacts(std::size_t rounded,
                                               StreamId stream) const {
  OutOfMemoryEvent facts;
  facts.device = index_;
  facts.requested_bytes = rounded;
  const SegmentSource::DeviceMemoryInfo info = source_.memoryInfo(index_);
  facts.device_total_bytes = cap_.capped ? cap_.bytes : info.total_bytes;
  facts.device_free_bytes = info.free_bytes;
  if (cap_.capped) {
    const std::size_t under_limit =
        cap_.bytes - std::min<std::size_t>(cap_.bytes, stats_.reserved_bytes.current);
    facts.device_free_bytes = std::min(facts.device_free_bytes, under_limit);
    if (info.total_bytes == 0) facts.device_free_bytes = under_limit;
  }
  facts.allocated_bytes = static_cast<std::size_t>(block_stats_.allocatedBytes());
  facts.reserved_bytes = static_cast<std::size_t>(stats_.reserved_bytes.current);
  facts.reserved_unallocated_bytes = facts.reserved_bytes - facts.allocated_bytes;
  std::size_t free_total = 0;
  for (const auto& [base, segment] : segments_) {
    if (segment->pool->owner != nullptr) facts.private_pool_bytes += segment->size;
    for (const Block* block = segment->head; block != nullptr; block = block->next) {
      if (block->allocated) continue;
      free_total += block->size;
      facts.largest_free_block = std::max(facts.largest_free_block, block->size);
    }
  }
  facts.fragmentation = free_total == 0
                            ? 0.0
                            : 1.0 - static_cast<double>(facts.largest_free_block) /
                                        static_cast<double>(free_total);
  facts.stream = Stream(Device::unchecked(allocator_.deviceType(), index_), stream);
  return facts;
}

std::string DeviceCache::outOfMemoryMessage(const OutOfMemoryEvent& facts) const {
  const Device device = Device::unchecked(allocator_.deviceType(), index_);
  std::string message = accel::detail::concat(
      // torch's first sentences ("... out of memory. Tried to allocate 2.00 MiB"),
      // which log scrapers and users' tooling match.
      device, " is out of memory. Tried to allocate ", formatBytes(facts.requested_bytes),
      " (", facts.requested_bytes, " bytes) on stream ", facts.stream.id, ". Capacity: ",
      cap_.capped || facts.device_total_bytes != 0 ? formatBytes(facts.device_total_bytes)
                                                   : std::string("unknown"),
      capText(cap_), "; free: ", formatBytes(facts.device_free_bytes),
      "; allocated: ", formatBytes(facts.allocated_bytes),
      "; reserved but unallocated: ", formatBytes(facts.reserved_unallocated_bytes),
      "; in private pools: ", formatBytes(facts.private_pool_bytes),
      "; fragmentation: ", static_cast<int>(facts.fragmentation * 100.0 + 0.5),
      "% (largest free cached block ", formatBytes(facts.largest_free_block), ").");
  if (facts.requested_bytes > kMaxRequest) {
    message += accel::detail::concat(
        " No device holds that much: requests above ", kMaxRequest,
        " bytes are refused (is the size a negative number converted to unsigned?).");
    return message;
  }
  // Suggest a setting only where it would change something.
  const bool fragmented = facts.reserved_unallocated_bytes >= facts.requested_bytes;
  const bool below_device = cap_.fraction && *cap_.fraction < 1.0;
  if (cap_.capped && below_device &&
      facts.reserved_bytes + facts.requested_bytes > cap_.bytes && !fragmented) {
    // The fraction refused it, not the device: the fraction is what to change.
    message += accel::detail::concat(
        " The limit is this process's memory fraction, not the device: raise it with ",
        hookInfo(HookId::setMemoryFraction).name,
        "(), or free tensors you no longer need.");
  } else if (fragmented && !settings_.expandable_segments && source_.pageSize() > 0) {
    message +=
        " Much memory is reserved but unallocated; to avoid fragmentation set "
        "ACCEL_ALLOC_CONF=expandable_segments:true.";
  } else if (fragmented && settings_.max_split_size == 0) {
    message +=
        " Much memory is reserved but unallocated; to limit fragmentation set "
        "ACCEL_ALLOC_CONF=max_split_size_mb:<MiB>.";
  } else {
    message += " Free tensors you no longer need, or use smaller batches.";
  }
  return message;
}

}  // namespace accel::memory::detail
