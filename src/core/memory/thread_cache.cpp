#include "memory/thread_cache.h"

#include <new>
#include <thread>

#include "accel/fork.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

constinit thread_local ThreadCacheSlot t_thread_cache_slots[kThreadCacheSlots]
    __attribute__((tls_model("initial-exec"))) = {};

namespace {

// The registry: which caches each thread and each device has. Only cache
// creation, thread exit and device destruction take its lock, so it is a
// spin lock that a fork child clears (the thread that held it did not
// survive), like the biased lock's record pool. Lock order: the registry,
// then a device's lock.
constinit std::atomic<bool> g_registry_locked{false};

class RegistryLock {
 public:
  RegistryLock() noexcept {
    while (g_registry_locked.exchange(true, std::memory_order_acquire)) {
      std::this_thread::yield();
    }
  }
  ~RegistryLock() { g_registry_locked.store(false, std::memory_order_release); }
  RegistryLock(const RegistryLock&) = delete;
  RegistryLock& operator=(const RegistryLock&) = delete;
};

void clearRegistryLockInChild() noexcept {
  g_registry_locked.store(false, std::memory_order_relaxed);
}

const bool kRegistryForkCallback = [] {
  try {
    registerForkCallbacks({nullptr, nullptr, &clearRegistryLockInChild});
  } catch (...) {
    // Out of memory at load: a child forked while a thread was making or
    // retiring a cache could then wait on this lock, as on any mutex.
  }
  return true;
}();

// Set once the thread's caches went back: later calls on this thread (from
// other thread_local destructors) use the device's lock only.
constinit thread_local bool t_caches_retired __attribute__((tls_model("initial-exec"))) =
    false;

// The calling thread's caches; its destructor gives them back.
struct ThreadCaches {
  ThreadCache* first = nullptr;
  ThreadCaches() = default;
  ThreadCaches(const ThreadCaches&) = delete;
  ThreadCaches& operator=(const ThreadCaches&) = delete;
  ~ThreadCaches() {
    t_caches_retired = true;
    for (ThreadCacheSlot& slot : t_thread_cache_slots) slot = {};
    RegistryLock lock;
    while (first != nullptr) {
      ThreadCache* cache = first;
      first = cache->thread_next;
      // Under the registry lock the device cannot be destroyed meanwhile.
      if (DeviceCache* device = cache->device.load(std::memory_order_relaxed))
        device->retireThreadCache(cache);
      delete cache;
    }
  }
};

thread_local ThreadCaches t_caches;

}  // namespace

ThreadCache* attachThreadCache(DeviceCache& device) noexcept {
  if (t_caches_retired) return nullptr;
  ThreadCaches& mine = t_caches;
  ThreadCache* found = nullptr;
  {
    RegistryLock lock;
    // Caches of destroyed devices are dropped here, so a thread that outlives
    // many allocators keeps only its live caches.
    for (ThreadCache** at = &mine.first; *at != nullptr;) {
      ThreadCache* cache = *at;
      DeviceCache* owner = cache->device.load(std::memory_order_relaxed);
      if (owner == nullptr) {
        *at = cache->thread_next;
        delete cache;
        continue;
      }
      if (owner == &device) found = cache;
      at = &cache->thread_next;
    }
    if (found == nullptr) {
      found = new (std::nothrow) ThreadCache;
      if (found == nullptr) return nullptr;
      found->device.store(&device, std::memory_order_relaxed);
      found->thread = threadCacheToken();
      found->thread_next = mine.first;
      mine.first = found;
      device.linkThreadCache(found);
    }
  }
  threadCacheSlot(&device) = {&device, found};
  return found;
}

void detachThreadCaches(ThreadCache* first) noexcept {
  RegistryLock lock;
  for (ThreadCache* cache = first; cache != nullptr; cache = cache->device_next) {
    cache->device.store(nullptr, std::memory_order_relaxed);
  }
}

}  // namespace accel::memory::detail
