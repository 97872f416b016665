// DeviceCache: settings, the memory limit, and what a change of private pools
// (private_pools.h) means for the device: thread caches stop or resume
// serving, a released pool's memory goes back.
#include <algorithm>
#include <memory>

#include "accel/error.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::setSettings(const AllocatorSettings& settings) {
  BiasedMutex::Guard lock(mutex_);
  ClaimedThreadCaches claimed(*this);  // and drained
  reuse_.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  settleParked();
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
  private_pools_.retain(id);
}

void DeviceCache::releasePool(MempoolId id) {
  BiasedMutex::Guard lock(mutex_);
  PrivatePool* pool = private_pools_.release(id, index_);
  if (pool == nullptr) return;  // it has users still
  // No stream allocates to it any more: the thread caches may serve again.
  ClaimedThreadCaches claimed(*this);
  updatePlain();
  updateLocalOk();
  maybeReleasePrivatePool(pool);
}

void DeviceCache::beginAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  if (!private_pools_.beginAllocating(id, stream, index_)) return;
  // The stream's requests go to the pool from now on: no thread cache may
  // serve them (they stop serving while any stream allocates to a pool).
  ClaimedThreadCaches claimed(*this);
  updatePlain();
  updateLocalOk();
}

void DeviceCache::endAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  ClaimedThreadCaches claimed(*this);
  private_pools_.endAllocating(id, stream);
  updatePlain();
  updateLocalOk();
}

// The fast paths' two flags, from the state they depend on; called after
// each change of it.
void DeviceCache::updatePlain() noexcept {
  // In a fork child every free takes freeSlow, which leaks inherited blocks.
  plain_ = pending_.empty() && !private_pools_.anyAllocating() &&
           !history_.capturesStacks() && settings_.max_split_size == 0 &&
           fork_generation_ == 0;
  tracing_ = history_.tracing();
}

}  // namespace accel::memory::detail
