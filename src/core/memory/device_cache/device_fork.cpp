// DeviceCache: fork() — every live device held across it, and what a child
// does with the memory it inherited (docs/lifecycle.md, "fork()").
//
// A child has only the forking thread. Had another thread been inside a
// device's lock, its bias or its thread cache at the fork, the child's
// statistics, snapshots and emptyCache would wait for it forever. So before
// the fork the forking thread holds every live device: the list of live
// devices' lock, then each device's lock with its bias withdrawn (waiting
// for the owner to leave), then every thread cache of it drained and
// claimed. After the fork both sides let go; the child also forgets the
// caches of the threads it does not have (empty: drained before the fork).
//
// No deadlock: the forking thread holds nothing when fork() is called and
// takes these in one order; no thread holds a device lock while waiting for
// the live list's lock (only device construction and destruction take it,
// with no device lock held), nor holds one device's lock while taking
// another's (a segment source must not call into another caching
// allocator), and a thread inside its cache or inside a biased section waits
// for nothing. A holder of a device lock may wait for its backend's locks
// (the source's calls), so these handlers run before every backend's `before`
// (hooks/fork_handlers.h). glibc's fork takes malloc's locks only after the
// `before` handlers, so draining (which may allocate a free-set node) is
// safe there.
//
// The child's memory rule: a segment made before the fork is the parent's
// device memory, which a child cannot use (a GPU context does not survive
// fork) and must not give back. Its blocks freed in the child leak: counted
// freed but still active, as a free waiting for an event that never
// completes (statistics stay exact); its free blocks are never handed out
// again; emptyCache and the retries before OutOfMemory skip it. New requests
// get new segments. A device in a child keeps its thread caches and reuse
// lists' fast paths off (plain_, local_ok_), so that every free reaches
// freeSlow, where the inherited test is.
#include <mutex>

#include "hooks/fork_handlers.h"
#include "memory/device_cache/device_cache.h"
#include "memory/live_list.h"

namespace accel::memory::detail {
namespace {

constinit LiveList<DeviceCache> g_live_devices;

void lockLiveDevices() noexcept;
void unlockLiveDevicesInParent() noexcept;
void unlockLiveDevicesInChild() noexcept;

const bool kLiveDevicesForkCallbacks = [] {
  try {
    accel::detail::registerCoreForkCallbacks(
        {&lockLiveDevices, &unlockLiveDevicesInParent, &unlockLiveDevicesInChild});
  } catch (...) {
    // Out of memory at load: a child forked while another thread held a
    // device lock could then wait on it, as on any mutex held at fork.
  }
  return true;
}();

}  // namespace

void DeviceCache::lockForFork() noexcept {
  mutex_.lockKeepingBias();
  if (thread_caches_ != nullptr) claimThreadCaches(/*drain_blocks=*/true);
}

void DeviceCache::unlockAfterForkInParent() noexcept {
  if (thread_caches_ != nullptr) releaseThreadCaches();
  mutex_.unlockKeepingBias();
}

void DeviceCache::unlockAfterForkInChild() noexcept {
  // Plain stores and pointer moves only (no allocation, no lock taken).
  const void* me = threadCacheToken();
  for (ThreadCache** at = &thread_caches_; *at != nullptr;) {
    ThreadCache* cache = *at;
    if (cache->thread == me) {
      at = &cache->device_next;
      continue;
    }
    // Its thread is gone: nothing will use, retire or free it. The registry's
    // lists of that thread are gone with it, so the cache is leaked.
    *at = cache->device_next;
    cache->device.store(nullptr, std::memory_order_relaxed);
  }
  ++fork_generation_;
  set_aside_pending_ = true;
  updatePlain();
  updateLocalOk();
  mutex_.unlockKeepingBias(/*in_fork_child=*/true);
}

void DeviceCache::setAsideInherited() noexcept {
  set_aside_pending_ = false;
  // Held blocks into the free sets first, so that one pass finds every free
  // block (this thread's cache was drained before the fork and serves no
  // more in a child).
  reuse_.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  settleParked();
  for (auto& [base, segment] : segments_) {
    if (!inherited(segment.get())) continue;
    for (Block* block = segment->head; block != nullptr; block = block->next) {
      // Out of its free set, never merged into (its neighbours' frees leak),
      // still counted where it was (reserved, inactive split).
      if (!block->allocated) block->pool->erase(block);
    }
  }
  expandable_.forgetIf([this](const Segment* segment) { return inherited(segment); });
  // Events recorded in the parent must not be queried or released here; their
  // blocks stay pending (active) for good.
  pending_.forgetIf([this](const Block* block) { return inherited(block->segment); });
  updatePlain();
}

void DeviceCache::linkLive() noexcept { g_live_devices.link(this); }

void DeviceCache::unlinkLive() noexcept { g_live_devices.unlink(this); }

void DeviceCache::lockLive() noexcept {
  g_live_devices.lockAll([](DeviceCache* device) { device->lockForFork(); });
}

void DeviceCache::unlockLive(bool in_child) noexcept {
  g_live_devices.unlockAll([in_child](DeviceCache* device) {
    if (in_child) {
      device->unlockAfterForkInChild();
    } else {
      device->unlockAfterForkInParent();
    }
  });
}

namespace {

void lockLiveDevices() noexcept { DeviceCache::lockLive(); }
void unlockLiveDevicesInParent() noexcept { DeviceCache::unlockLive(false); }
void unlockLiveDevicesInChild() noexcept { DeviceCache::unlockLive(true); }

}  // namespace

}  // namespace accel::memory::detail
