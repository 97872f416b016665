// CachingDeviceAllocator: the Allocator of one device that a backend on the
// core CachingAllocator returns from getDeviceAllocator(i).
//
// A framework allocates through `Allocator&` with one virtual call; this
// class makes that call land in libaccel, next to the cache, so that a
// backend's device allocation costs what the core's does: a test of one
// per-device flag, the thread's current stream on the device (read from the
// backend's ThreadCurrent) and the cache's own allocate, with the core's
// deleter in the DataPtr. A backend written as its own Allocator subclass
// pays a second call level, a call through the PLT into libaccel and its own
// checks on every allocation (docs/design-notes.md, "openreg's pair").
//
// The backend's rare conditions (fault injection armed, device not used yet,
// a fork child, a capture to route) fold into the one flag, `diverted`: while
// it is set, every request goes to the backend's Detour, which checks and
// reports each case and may allocate from the cache itself
// (allocateFromCache). The backend sets the flag whenever one of its
// conditions may have begun and clears it once none holds; a flag set when no
// condition holds only costs speed, a flag clear while one holds skips the
// backend's check, so set it before (or as) the condition becomes visible.
//
//   Runtime::init():   allocator_.emplace(cache, index, current_, &detour_,
//                                          /*diverted=*/true);
//   first use:         allocator_->setDiverted(false);
//
// Thread-safety: allocate(), allocateFromCache(), setDiverted() and
// diverted() may be called from any thread at once; the flag is read without
// ordering (a thread that set it sees it on its next allocation; others soon
// after, as with any relaxed flag). Lifetime: must not outlive the
// CachingAllocator, the ThreadCurrent or the Detour (backends keep all four
// for the process's lifetime).
#pragma once

#include <atomic>
#include <cstddef>

#include "accel/allocator.h"
#include "accel/device.h"
#include "accel/error.h"
#include "accel/export.h"
#include "accel/kit/thread_current.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/device_cache_handle.h"

namespace accel::kit {

class ACCEL_API CachingDeviceAllocator final : public Allocator {
 public:
  // A backend's own path for the requests of a diverted device.
  class ACCEL_API Detour {
   public:
    // Allocates `bytes` for the calling thread on `allocator`'s device the
    // backend's way, checking and reporting whatever made it divert (the
    // backend may clear the flag there). Throws what the backend's checks
    // and the cache throw.
    [[nodiscard]] virtual DataPtr allocate(CachingDeviceAllocator& allocator,
                                           std::size_t bytes) = 0;
    // Called in a handler of the cache's OutOfMemory for `bytes` on the fast
    // path: rethrows it, or throws an OutOfMemory with the backend's advice.
    // The default rethrows it as it is.
    [[noreturn]] virtual void outOfMemory(const OutOfMemory& error,
                                          const CachingDeviceAllocator& allocator,
                                          std::size_t bytes);

   protected:
    ~Detour() = default;
  };

  // Device `index` of `cache` (checked: InvalidArgument outside its device
  // count), on `current`'s streams; requests go to `detour` while diverted.
  // A null detour means the flag is never set (setDiverted(true) throws
  // InvalidArgument).
  CachingDeviceAllocator(memory::CachingAllocator& cache, DeviceIndex index,
                         const ThreadCurrent& current, Detour* detour = nullptr,
                         bool diverted = false);
  CachingDeviceAllocator(const CachingDeviceAllocator&) = delete;
  CachingDeviceAllocator& operator=(const CachingDeviceAllocator&) = delete;

  // At least `bytes` (0: an empty DataPtr on the device) on the thread's
  // current stream of the device, from its private pool while that stream
  // captures; the Detour's answer while diverted. Throws OutOfMemory (through
  // Detour::outOfMemory), and what the Detour throws.
  [[nodiscard]] DataPtr allocate(std::size_t bytes) override;
  [[nodiscard]] Device device() const noexcept override { return device_; }

  // allocate() without the flag: what a Detour calls once its checks passed.
  // Throws OutOfMemory as it comes from the cache (no Detour::outOfMemory).
  [[nodiscard]] DataPtr allocateFromCache(std::size_t bytes);

  // Sends later requests to the Detour (true) or straight to the cache.
  // Never throws, except InvalidArgument for true without a Detour.
  void setDiverted(bool diverted);
  [[nodiscard]] bool diverted() const noexcept {
    return diverted_.load(std::memory_order_relaxed);
  }

  [[nodiscard]] memory::CachingAllocator& cache() const noexcept { return cache_; }
  [[nodiscard]] const ThreadCurrent& current() const noexcept { return current_; }

 private:
  [[noreturn]] void rethrowOutOfMemory(const OutOfMemory& error, std::size_t bytes) const;

  std::atomic<bool> diverted_;
  const memory::detail::DeviceCacheHandle device_cache_;
  const ThreadCurrent& current_;
  const Device device_;
  Detour* const detour_;
  memory::CachingAllocator& cache_;
};

}  // namespace accel::kit
