// PrivatePools: retaining, releasing and routing streams to private pools
// (private_pools.h).
#include "memory/device_cache/private_pools.h"

#include <algorithm>

#include "accel/error.h"

namespace accel::memory::detail {

void PrivatePools::retain(MempoolId id) {
  auto& pool = pools_[id];
  if (!pool) pool = std::make_unique<PrivatePool>(id);
  ++pool->users;
}

PrivatePool* PrivatePools::release(MempoolId id, DeviceIndex device) {
  auto found = pools_.find(id);
  ACCEL_CHECK(found != pools_.end() && found->second->users > 0, InvalidArgument,
              "releasePool(): memory pool {", id.first, ", ", id.second,
              "} has no users on device ", static_cast<int>(device),
              "; release a pool only as often as it was retained");
  PrivatePool* pool = found->second.get();
  if (--pool->users > 0) return nullptr;
  std::erase_if(allocating_, [&](const auto& entry) { return entry.second == pool; });
  return pool;
}

bool PrivatePools::beginAllocating(MempoolId id, StreamId stream, DeviceIndex device) {
  auto found = pools_.find(id);
  ACCEL_CHECK(found != pools_.end() && found->second->users > 0, InvalidArgument,
              "beginAllocateToPool(): memory pool {", id.first, ", ", id.second,
              "} is not retained on device ", static_cast<int>(device),
              "; call retainPool first");
  for (auto& entry : allocating_) {
    if (entry.first == stream) {
      entry.second = found->second.get();
      return false;
    }
  }
  allocating_.emplace_back(stream, found->second.get());
  return true;
}

void PrivatePools::endAllocating(MempoolId id, StreamId stream) noexcept {
  std::erase_if(allocating_, [&](const auto& entry) {
    return entry.first == stream && entry.second->id == id;
  });
}

void PrivatePools::erase(const PrivatePool* pool) noexcept {
  auto found = pools_.find(pool->id);
  if (found != pools_.end() && found->second.get() == pool) pools_.erase(found);
}

const PrivatePool* PrivatePools::find(MempoolId id) const noexcept {
  auto found = pools_.find(id);
  return found != pools_.end() ? found->second.get() : nullptr;
}

}  // namespace accel::memory::detail
