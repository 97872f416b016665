// PinnedCachingAllocator: fork() — every live pinned cache's mutex held
// across it, and what a child does with the pinned memory it inherited
// (docs/lifecycle.md, "fork()"). The same rule as the device caches'
// (device_fork.cpp), for the host side.
//
// A child has only the forking thread: a pinned cache's mutex that another
// thread held at the fork (inside cudaHostAlloc, say) would stay held there
// and the child's first allocation, free, stats or emptyCache would wait
// forever. So before the fork the forking thread takes the live caches' list
// lock and then every live cache's mutex (list order); after it both sides
// release them, and the child also advances each cache's fork generation.
//
// No deadlock: the forking thread holds nothing when it starts; a pinned
// cache's mutex holder waits only for its source (a backend's driver call),
// never for the list lock, another pinned cache or a device cache's lock, and
// the device caches' holders never wait for a pinned cache (a segment source
// does not call into an allocator). So the pinned and device callbacks may run
// in either order; both run before every backend's `before`
// (hooks/fork_handlers.h), since a holder may wait for a backend lock.
//
// The child's rule: a block made before the fork is the parent's pinned
// memory, which the child must not give back (cudaFreeHost or clSVMFree on
// it would act on a context the child does not have). Its free leaks: counted
// freed but still active; the child's first allocation or emptyCache takes
// inherited cached blocks and pending events out of circulation; the
// destructor skips them. New requests get new blocks.
#include <mutex>

#include "accel/memory/pinned_caching_allocator.h"
#include "hooks/fork_handlers.h"
#include "memory/live_list.h"

namespace accel::memory {

struct PinnedForkAccess {
  static void lockAll() noexcept;
  static void unlockAll(bool in_child) noexcept;
};

namespace {

constinit detail::LiveList<PinnedCachingAllocator> g_live_caches;

void lockPinnedCaches() noexcept { PinnedForkAccess::lockAll(); }
void unlockPinnedCachesInParent() noexcept { PinnedForkAccess::unlockAll(false); }
void unlockPinnedCachesInChild() noexcept { PinnedForkAccess::unlockAll(true); }

const bool kPinnedCachesForkCallbacks = [] {
  try {
    accel::detail::registerCoreForkCallbacks(
        {&lockPinnedCaches, &unlockPinnedCachesInParent, &unlockPinnedCachesInChild});
  } catch (...) {
    // Out of memory at load: a child forked while another thread held a
    // pinned cache's mutex could then wait on it, as on any mutex held at fork.
  }
  return true;
}();

}  // namespace

void PinnedCachingAllocator::linkLive() noexcept { g_live_caches.link(this); }

void PinnedCachingAllocator::unlinkLive() noexcept { g_live_caches.unlink(this); }

void PinnedForkAccess::lockAll() noexcept {
  g_live_caches.lockAll([](PinnedCachingAllocator* cache) { cache->mutex_.lock(); });
}

void PinnedForkAccess::unlockAll(bool in_child) noexcept {
  // Plain stores only in the child (no allocation): the set-aside waits for
  // the child's first allocation or emptyCache.
  g_live_caches.unlockAll([in_child](PinnedCachingAllocator* cache) {
    if (in_child) {
      ++cache->fork_generation_;
      cache->set_aside_pending_ = true;
    }
    cache->mutex_.unlock();
  });
}

}  // namespace accel::memory
