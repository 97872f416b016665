// CachingAllocatorHooks<Base>: the memory and memory_history hook groups of a
// backend answered by its CachingAllocator, in one line.
//
// A backend that plugs the core caching allocator in derives its hooks from
// CachingAllocatorHooks<AcceleratorHooks> (or from any AcceleratorHooks
// subclass, such as a backend-kit base) and implements cachingAllocator().
// memoryStats, resetPeakMemoryStats, emptyCache, getMemoryInfo (the
// SegmentSource's memoryInfo), resetAccumulatedMemoryStats,
// setMemoryFraction, recordMemoryHistory, memorySnapshot and
// attachOutOfMemoryObserver then come from the allocator; hostMemoryStats
// from the pinned cache a backend names in pinnedCachingAllocator(). The
// same two caches are the core caches the copies group's guarantees read
// (AcceleratorHooks::coreDeviceCache and corePinnedCache): a copy's device
// range must lie in a live block of cachingAllocator(), and a pinned block
// of pinnedCachingAllocator() given to an asynchronous copy is held back
// until the stream has passed the copy. The backend still declares the
// groups in its Capabilities.
//
// A SegmentSource that reports no capacity (total_bytes 0) makes
// getMemoryInfo and setMemoryFraction throw NotSupported naming the backend
// and the hook; so does hostMemoryStats without a pinned cache.
//
// Thread-safety: as the CachingAllocator's members (all thread-safe).
#pragma once

#include <utility>

#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"

namespace accel::memory {

template <class Base = AcceleratorHooks>
class CachingAllocatorHooks : public Base {
 public:
  using Base::Base;

 protected:
  // The backend's allocator; must live as long as the hooks object.
  [[nodiscard]] virtual CachingAllocator& cachingAllocator() const = 0;

  MemoryStats memoryStatsImpl(DeviceIndex index) const override {
    return cachingAllocator().stats(index);
  }
  void resetPeakMemoryStatsImpl(DeviceIndex index) override {
    cachingAllocator().resetPeakStats(index);
  }
  void emptyCacheImpl() override { cachingAllocator().emptyCache(); }
  DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const override {
    const DeviceMemoryInfo info = cachingAllocator().memoryInfo(index);
    if (info.total_bytes == 0) refuseUnknownCapacity(HookId::getMemoryInfo);
    return info;
  }
  void resetAccumulatedMemoryStatsImpl(DeviceIndex index) override {
    cachingAllocator().resetAccumulatedStats(index);
  }
  void setMemoryFractionImpl(double fraction, DeviceIndex index) override {
    if (cachingAllocator().memoryInfo(index).total_bytes == 0)
      refuseUnknownCapacity(HookId::setMemoryFraction);
    cachingAllocator().setMemoryFraction(index, fraction);
  }
  MemoryStats hostMemoryStatsImpl() const override {
    const PinnedCachingAllocator* pinned = pinnedCachingAllocator();
    if (pinned == nullptr) {
      throw NotSupported(accel::detail::concat(
          "'", this->name(), "' has no pinned memory cache to report on (",
          hookInfo(HookId::hostMemoryStats).name,
          "); its pinned memory is not the core's PinnedCachingAllocator"));
    }
    return pinned->stats();
  }

  // The backend's cache of pinned host memory, for hostMemoryStats and the
  // copies group (which records a copy's stream on its blocks); null (the
  // default) when it has none. Must live as long as the hooks object.
  [[nodiscard]] virtual PinnedCachingAllocator* pinnedCachingAllocator() const {
    return nullptr;
  }

  // The copies group's view of the two caches (hooks.h).
  CachingAllocator* coreDeviceCache() const override { return &cachingAllocator(); }
  PinnedCachingAllocator* corePinnedCache() const override {
    return pinnedCachingAllocator();
  }

  void recordMemoryHistoryImpl(const MemoryHistoryOptions& options) override {
    cachingAllocator().recordHistory(options);
  }
  MemorySnapshot memorySnapshotImpl(const MemorySnapshotOptions& options) const override {
    return cachingAllocator().snapshot(options);
  }
  void attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer) override {
    cachingAllocator().attachOutOfMemoryObserver(std::move(observer));
  }

 private:
  [[noreturn]] void refuseUnknownCapacity(HookId hook) const {
    throw NotSupported(accel::detail::concat(
        "'", this->name(), "' cannot report its device memory capacity (",
        hookInfo(hook).name, "): its segment source's memoryInfo gives no total"));
  }
};

}  // namespace accel::memory
