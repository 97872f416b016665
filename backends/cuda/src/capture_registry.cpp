#include "capture_registry.h"

#include <algorithm>
#include <mutex>

#include "capture_deferrals.h"
#include "cuda_memory.h"
#include "cxx_boundary.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

struct Capture {
  unsigned long long id = 0;
  DeviceIndex device = 0;
  MempoolId pool;
  Stream origin;
  std::vector<Stream> routed;  // streams forked into it that allocated
};

struct Registry {
  // Held while the count of captures underway (capture_deferrals.h)
  // changes, so that the allocators' diversion changes with it.
  std::mutex mutex;
  std::vector<Capture> captures;
  // Diverted while captures are underway (divertWhileCapturing).
  std::vector<kit::CachingDeviceAllocator*> allocators;
};

Registry& registry() {
  static auto* const r = new Registry();  // never destroyed
  return *r;
}

// The lock is held. One capture fewer underway; the last one's end runs
// what was deferred and lets the allocators go straight to the cache.
void oneFewer(Registry& r) noexcept {
  if (captureNoLongerUnderway()) {
    for (kit::CachingDeviceAllocator* allocator : r.allocators) {
      allocator->setDiverted(false);
    }
  }
}

}  // namespace

void captureBeginning() noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  deferWhileCapturing();
  for (kit::CachingDeviceAllocator* allocator : r.allocators)
    allocator->setDiverted(true);
}

void captureBegan(unsigned long long capture_id, DeviceIndex device, MempoolId pool,
                  Stream origin) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.captures.push_back({capture_id, device, pool, origin, {}});
}

void captureAbandoned() noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  oneFewer(r);
}

std::vector<Stream> captureEnded(unsigned long long capture_id) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<Stream> routed;
  auto found = std::find_if(r.captures.begin(), r.captures.end(),
                            [&](const Capture& c) { return c.id == capture_id; });
  if (found == r.captures.end()) return routed;
  routed.swap(found->routed);
  r.captures.erase(found);
  oneFewer(r);
  return routed;
}

void divertWhileCapturing(kit::CachingDeviceAllocator& allocator) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (std::find(r.allocators.begin(), r.allocators.end(), &allocator) ==
      r.allocators.end()) {
    r.allocators.push_back(&allocator);
  }
  allocator.setDiverted(capturesUnderway());
}

void routeToCapturePool(DeviceIndex device, Stream stream) {
  unsigned long long id = 0;
  if (!capturesUnderway() || !isCapturing(toAdapter(stream), &id)) return;
  Registry& r = registry();
  MempoolId pool;
  {
    std::lock_guard lock(r.mutex);
    auto found = std::find_if(r.captures.begin(), r.captures.end(),
                              [&](const Capture& c) { return c.id == id; });
    if (found == r.captures.end() || found->device != device || found->origin == stream ||
        std::find(found->routed.begin(), found->routed.end(), stream) !=
            found->routed.end()) {
      return;
    }
    found->routed.push_back(stream);
    pool = found->pool;
  }
  // Outside the lock: the allocator calls deferFree under its own lock.
  deviceCachingAllocator().beginAllocateToPool(device, pool, stream);
}

}  // namespace accel::cuda::detail
