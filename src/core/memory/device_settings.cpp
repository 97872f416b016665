// DeviceCache: settings, the memory limit, and private pools (retain,
// release, and the streams that allocate to them).
#include <algorithm>
#include <memory>

#include "accel/error.h"
#include "memory/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::setSettings(const AllocatorSettings& settings) {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  settings_ = settings;
  stats_.max_split_size = sized(settings.max_split_size);
  updatePlain();
}

AllocatorSettings DeviceCache::settings() const {
  BiasedMutex::Guard lock(mutex_);
  return settings_;
}

void DeviceCache::setLimit(std::size_t bytes) {
  BiasedMutex::Guard lock(mutex_);
  limit_ = bytes;
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
  std::erase_if(allocating_to_pool_,
                [&](const auto& entry) { return entry.second == pool; });
  updatePlain();
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
  allocating_to_pool_.emplace_back(stream, found->second.get());
  updatePlain();
}

void DeviceCache::endAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  std::erase_if(allocating_to_pool_, [&](const auto& entry) {
    return entry.first == stream && entry.second->id == id;
  });
  updatePlain();
}

}  // namespace accel::memory::detail
