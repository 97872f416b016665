// CachingAllocatorHooks<Base>: the memory and memory_history hook groups of a
// backend answered by its CachingAllocator, in one line.
//
// A backend that plugs the core caching allocator in derives its hooks from
// CachingAllocatorHooks<AcceleratorHooks> (or from any AcceleratorHooks
// subclass, such as a backend-kit base) and implements cachingAllocator().
// memoryStats, resetPeakMemoryStats, emptyCache, recordMemoryHistory,
// memorySnapshot and attachOutOfMemoryObserver then come from the allocator;
// the backend still declares the groups in its Capabilities.
//
// Thread-safety: as the CachingAllocator's members (all thread-safe).
#pragma once

#include <utility>

#include "accel/hooks.h"
#include "accel/memory/caching_allocator.h"

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
  void recordMemoryHistoryImpl(const MemoryHistoryOptions& options) override {
    cachingAllocator().recordHistory(options);
  }
  MemorySnapshot memorySnapshotImpl(const MemorySnapshotOptions& options) const override {
    return cachingAllocator().snapshot(options);
  }
  void attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer) override {
    cachingAllocator().attachOutOfMemoryObserver(std::move(observer));
  }
};

}  // namespace accel::memory
