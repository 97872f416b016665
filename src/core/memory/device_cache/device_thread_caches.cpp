// DeviceCache: its side of the thread caches (thread_cache.h) — linking and
// retiring them, claiming and draining them, and when they may serve.
#include <thread>

#include "memory/device_cache/device_cache.h"
#include "memory/process_barrier.h"

namespace accel::memory::detail {
namespace {

void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits for a claimed cache's owner to leave its section: it is a few
// instructions long, so a short spin, then yields (the owner may have been
// preempted inside it).
void waitUntilOutside(const ThreadCache& cache) noexcept {
  for (int spins = 0; cache.inside.load(std::memory_order_acquire); ++spins) {
    if (spins < 128) {
      cpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

// Sets or clears `bit` of the cache's keep_out. Its writers hold the device's
// lock, so a load and a store suffice (the owner only reads it).
void setKeepOut(ThreadCache& cache, std::uint8_t bit, bool on,
                std::memory_order order) noexcept {
  const std::uint8_t now = cache.keep_out.load(std::memory_order_relaxed);
  cache.keep_out.store(
      on ? static_cast<std::uint8_t>(now | bit) : static_cast<std::uint8_t>(now & ~bit),
      order);
}

}  // namespace

void DeviceCache::releaseAllHeld() noexcept {
  reuse_.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  settleParked();
  if (thread_caches_ == nullptr) return;
  claimThreadCaches(true);
  releaseThreadCaches();
}

void DeviceCache::linkThreadCache(ThreadCache* cache) noexcept {
  BiasedMutex::Guard lock(mutex_);
  cache->keep_out.store(local_ok_ ? 0 : ThreadCache::kNotServing,
                        std::memory_order_relaxed);
  cache->divisions = settings_.roundup_power2_divisions;
  cache->device_next = thread_caches_;
  thread_caches_ = cache;
}

void DeviceCache::retireThreadCache(ThreadCache* cache) noexcept {
  // On the owner's thread, as it exits: its cache is its own to drain.
  BiasedMutex::Guard lock(mutex_);
  drainThreadCache(*cache);
  for (ThreadCache** at = &thread_caches_; *at != nullptr; at = &(*at)->device_next) {
    if (*at == cache) {
      *at = cache->device_next;
      break;
    }
  }
  cache->device.store(nullptr, std::memory_order_relaxed);
}

void DeviceCache::claimThreadCaches(bool drain_blocks) noexcept {
  const void* me = threadCacheToken();
  bool others = false;
  for (ThreadCache* cache = thread_caches_; cache != nullptr;
       cache = cache->device_next) {
    if (cache->thread == me) continue;
    setKeepOut(*cache, ThreadCache::kClaimed, true, std::memory_order_relaxed);
    others = true;
  }
  // Every owner now either sees its claim or is seen inside (one barrier for
  // all of them).
  if (others) accel::detail::processBarrier();
  for (ThreadCache* cache = thread_caches_; cache != nullptr;
       cache = cache->device_next) {
    if (cache->thread != me) waitUntilOutside(*cache);
    if (drain_blocks) {
      drainThreadCache(*cache);
      continue;
    }
    absorbFigures(*cache);
  }
}

void DeviceCache::releaseThreadCaches() noexcept {
  const void* me = threadCacheToken();
  for (ThreadCache* cache = thread_caches_; cache != nullptr;
       cache = cache->device_next) {
    if (cache->thread != me)
      setKeepOut(*cache, ThreadCache::kClaimed, false, std::memory_order_release);
  }
}

void DeviceCache::updateLocalOk() noexcept {
  const bool enabled = settings_.thread_caches && fork_generation_ == 0 &&
                       accel::detail::processBarrierSupported();
  caches_enabled_.store(enabled, std::memory_order_relaxed);
  // Off in a fork child: every free must reach freeSlow (device_fork.cpp).
  local_ok_ = enabled && fork_generation_ == 0 && !private_pools_.anyAllocating() &&
              !history_.capturesStacks() && settings_.max_split_size == 0 &&
              !history_.recordsAllocations();
  for (ThreadCache* cache = thread_caches_; cache != nullptr;
       cache = cache->device_next) {
    setKeepOut(*cache, ThreadCache::kNotServing, !local_ok_, std::memory_order_relaxed);
    cache->divisions = settings_.roundup_power2_divisions;
  }
}

}  // namespace accel::memory::detail
