// DeviceCache: settings, the memory limit, and private pools (retain,
// release, and the streams that allocate to them).
#include <algorithm>
#include <memory>

#include "accel/error.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::setSettings(const AllocatorSettings& settings) {
  BiasedMutex::Guard lock(mutex_);
  ClaimedThreadCaches claimed(*this);  // and drained
  reuse_.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  settings_ = settings;
  stats_.max_split_size = sized(settings.max_split_size);
  mutex_.allowBias(settings.biased_lock);
  updatePlain();
  updateLocalOk();
}

AllocatorSettings DeviceCache::settings() const {
  BiasedMutex::Guard lock(mutex_);
  return settings_;
}

void DeviceCache::setCap(const ReserveCap& cap) {
  BiasedMutex::Guard lock(mutex_);
  cap_ = cap;
}

void DeviceCache::retainPool(MempoolId id) {
  BiasedMutex::Guard lock(mutex_);
  auto& pool = private_pools_[id];
  if (!pool) pool = std::make_unique<PrivatePool>(id);
  ++pool->users;
}

void DeviceCache::releasePool(MempoolId id) {
  BiasedMutex::Guard lock(mutex_);
  auto found = private_pools_.find(id);
  ACCEL_CHECK(found != private_pools_.end() && found->second->users > 0, InvalidArgument,
              "releasePool(): memory pool {", id.first, ", ", id.second,
              "} has no users on device ", static_cast<int>(index_),
              "; release a pool only as often as it was retained");
  PrivatePool* pool = found->second.get();
  if (--pool->users > 0) return;
  ClaimedThreadCaches claimed(*this);
  std::erase_if(allocating_to_pool_,
                [&](const auto& entry) { return entry.second == pool; });
  updatePlain();
  updateLocalOk();
  maybeReleasePrivatePool(pool);
}

void DeviceCache::beginAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  auto found = private_pools_.find(id);
  ACCEL_CHECK(found != private_pools_.end() && found->second->users > 0, InvalidArgument,
              "beginAllocateToPool(): memory pool {", id.first, ", ", id.second,
              "} is not retained on device ", static_cast<int>(index_),
              "; call retainPool first");
  for (auto& entry : allocating_to_pool_) {
    if (entry.first == stream) {
      entry.second = found->second.get();
      return;
    }
  }
  // The stream's requests go to the pool from now on: no thread cache may
  // serve them (they stop serving while any stream allocates to a pool).
  ClaimedThreadCaches claimed(*this);
  allocating_to_pool_.emplace_back(stream, found->second.get());
  updatePlain();
  updateLocalOk();
}

void DeviceCache::endAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  ClaimedThreadCaches claimed(*this);
  std::erase_if(allocating_to_pool_, [&](const auto& entry) {
    return entry.first == stream && entry.second->id == id;
  });
  updatePlain();
  updateLocalOk();
}

// The fast paths' two flags, from the state they depend on; called after
// each change of it.
void DeviceCache::updatePlain() noexcept {
  // In a fork child every free takes freeSlow, which leaks inherited blocks.
  plain_ = pending_events_.empty() && allocating_to_pool_.empty() && !history_stacks_ &&
           settings_.max_split_size == 0 && fork_generation_ == 0;
  tracing_ = (history_level_ == HistoryRecording::All ||
              history_level_ == HistoryRecording::AllocationsOnly) &&
             history_capacity_ > 0;
}

}  // namespace accel::memory::detail
