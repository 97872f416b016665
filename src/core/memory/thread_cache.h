// ThreadCache: one thread's reuse lists for one device, used without the
// device's lock.
//
// Two threads allocating on one device under one lock move the lock's and
// the cache's cache lines between their processors on every call, however
// cheap the lock (docs/design-notes.md, "Two threads on one device: thread
// caches"). So each thread that frees
// on a device gets a small cache of its own: a free that its reuse lists can
// hold goes there, and the next request of that size and stream on that
// thread takes it back, touching no line another thread writes. Everything
// else (a miss, a split, a merge, segments, events, private pools) goes
// through the device's lock as before.
//
// The owner enters its cache by storing `inside` and reading `keep_out`, plain
// stores and loads; the rare other side (a thread holding the device's lock
// that needs every block and figure: stats, snapshots, emptyCache, settings,
// the out-of-memory path, a peak about to rise) sets kClaimed in `keep_out`
// on every cache, runs one process-wide barrier (process_barrier.h) and waits
// for each owner to be outside. An owner that finds its cache claimed (or not
// serving) goes through the device's lock. Figures: a cache counts its own
// allocations and frees (LocalBlockFigures) and serves a request only while
// they lower the device's figures, so the device's peaks hold; the claimer
// absorbs them, exactly.
//
// Lifetime: a cache is made the first time its thread needs one for a device
// and lives until the thread exits (its blocks and figures go back to the
// device then) or the device is destroyed (the thread frees it at exit).
//
// Thread-safety: the fields marked owner are the owner's inside its
// section, or a claimer's (device lock held, cache claimed and seen outside),
// or the owner's while it holds the device's lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "memory/block_stats.h"
#include "memory/reuse_lists.h"

namespace accel::memory::detail {

class DeviceCache;

struct alignas(64) ThreadCache {
  // keep_out's bits: a claimer holds the cache; the device's rules forbid
  // serving from caches now (not its local_ok_). One byte so that the owner
  // tests both with one load. Written only under the device's lock (so a
  // load and a store, not a read-modify-write): kClaimed by claimers,
  // kNotServing while every cache is claimed (DeviceCache::updateLocalOk).
  static constexpr std::uint8_t kClaimed = 1;
  static constexpr std::uint8_t kNotServing = 2;
  std::atomic<bool> inside{false};  // the owner is in its section
  std::atomic<std::uint8_t> keep_out{kNotServing};
  // The device's roundup_power2_divisions, copied here so that the owner's
  // section reads one cache line; written like kNotServing.
  std::size_t divisions = 0;
  // Held blocks of the quantum on the default stream (in this first line);
  // every other held block is on `lists`. Owner.
  QuantumStack quanta;
  ReuseLists lists;            // owner
  LocalBlockFigures figures;   // owner; of the small and uniform pools (held)
  std::size_t held_bytes = 0;  // owner; bytes on the lists and the stack
  // The registry's (thread_cache.cpp), under its lock; device_next also under
  // the device's lock.
  // Null once the device is destroyed (an atomic: the owner reads it to tell
  // its cache from one of a destroyed device at the same address).
  std::atomic<DeviceCache*> device{nullptr};
  const void* thread = nullptr;  // the owner's token (threadCacheToken())
  ThreadCache* device_next = nullptr;
  ThreadCache* thread_next = nullptr;
};

// A thread cache holds at most this many bytes, of small- and uniform-pool
// blocks only (a cache is for the many small, short-lived blocks; the device
// holds no large-pool block either).
inline constexpr std::size_t kThreadCacheMaxBytes = std::size_t{32} << 20;

// The calling thread's cache for `device`, from a few direct-mapped slots in
// initial-exec TLS (one %fs-relative load); null when the slot holds another
// device's, or a destroyed device's at the same address.
struct ThreadCacheSlot {
  const DeviceCache* device = nullptr;
  ThreadCache* cache = nullptr;
};
inline constexpr std::size_t kThreadCacheSlots = 4;
extern constinit thread_local ThreadCacheSlot t_thread_cache_slots[kThreadCacheSlots]
    __attribute__((tls_model("initial-exec")));

[[nodiscard]] inline ThreadCacheSlot& threadCacheSlot(
    const DeviceCache* device) noexcept {
  // Device caches are separate heap objects of kilobytes: page bits differ.
  return t_thread_cache_slots[(reinterpret_cast<std::uintptr_t>(device) >> 12) %
                              kThreadCacheSlots];
}
[[nodiscard]] inline ThreadCache* findThreadCache(const DeviceCache* device) noexcept {
  const ThreadCacheSlot& slot = threadCacheSlot(device);
  if (slot.device != device) return nullptr;
  ThreadCache* cache = slot.cache;
  return cache->device.load(std::memory_order_relaxed) == device ? cache : nullptr;
}
// This thread's token: tells a claimer which cache is its own.
[[nodiscard]] inline const void* threadCacheToken() noexcept {
  return &t_thread_cache_slots;
}

// The calling thread's cache for `device`, found or made and linked to the
// device (DeviceCache::linkThreadCache); null when none can be had (out of
// memory, or the thread is exiting). Not under the device's lock.
[[nodiscard]] ThreadCache* attachThreadCache(DeviceCache& device) noexcept;
// From the device's destructor: its caches no longer name it.
void detachThreadCaches(ThreadCache* first) noexcept;

}  // namespace accel::memory::detail
