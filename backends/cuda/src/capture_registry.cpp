#include "capture_registry.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "accel/error.h"
#include "cuda_error.h"
#include "cuda_memory.h"
#include "current_device.h"
#include "events.h"
#include "page_mapping.h"
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

struct DeferredFree {
  DeviceIndex device = 0;
  void* ptr = nullptr;
};

struct DeferredPages {
  DeviceIndex device = 0;
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
};

struct DeferredRecord {
  EventId event = 0;
  Stream stream;
};

struct Registry {
  std::mutex mutex;
  std::atomic<int> underway{0};  // read without the lock on fast paths
  std::vector<Capture> captures;
  std::vector<DeferredFree> frees;
  std::vector<DeferredPages> unmaps;    // disjoint
  std::vector<DeferredPages> releases;  // after their unmaps
  std::vector<DeferredRecord> records;
  // Diverted while underway > 0 (divertWhileCapturing).
  std::vector<kit::CachingDeviceAllocator*> allocators;
};

Registry& registry() {
  static auto* const r = new Registry();  // never destroyed
  return *r;
}

// CUDA's capture status and id of `stream`.
cudaStreamCaptureStatus captureStatus(Stream stream, unsigned long long* id) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamGetCaptureInfo(nativeStream(stream), &status, id),
            "cudaStreamGetCaptureInfo");
  return status;
}

// The lock is held; the last capture has ended. What was deferred runs now,
// on streams that no longer capture.
void flush(Registry& r) noexcept {
  for (const DeferredRecord& record : r.records) {
    try {
      recordEvent(record.event, record.stream);
    } catch (...) {
      // The event or stream is gone; the allocator's query then fails and
      // the block waits for emptyCache's synchronisation.
    }
  }
  r.records.clear();
  for (const DeferredFree& free : r.frees) {
    try {
      DeviceContext context(free.device);
      (void)succeeded(cudaFree(free.ptr));
    } catch (...) {
      (void)succeeded(cudaFree(free.ptr));  // UVA: any context frees it
    }
  }
  r.frees.clear();
  // Pages are unmapped after their device's queued work, which may still
  // use them (cudaFree waits for it; cuMemUnmap does not).
  std::vector<DeviceIndex> synchronised;
  for (const DeferredPages& pages : r.unmaps) {
    try {
      DeviceContext context(pages.device);
      if (std::find(synchronised.begin(), synchronised.end(), pages.device) ==
          synchronised.end()) {
        (void)succeeded(cudaDeviceSynchronize());
        synchronised.push_back(pages.device);
      }
      pageMapping().unmap(reinterpret_cast<void*>(pages.begin), pages.end - pages.begin);
    } catch (...) {
      // No context: the pages stay mapped (a leak, never a fault).
    }
  }
  r.unmaps.clear();
  for (const DeferredPages& range : r.releases) {
    try {
      DeviceContext context(range.device);
      pageMapping().release(reinterpret_cast<void*>(range.begin),
                            range.end - range.begin);
    } catch (...) {
      pageMapping().release(reinterpret_cast<void*>(range.begin),
                            range.end - range.begin);
    }
  }
  r.releases.clear();
}

// The lock is held. One capture fewer underway; the last one's end runs
// what was deferred and lets the allocators go straight to the cache.
void oneFewer(Registry& r) noexcept {
  if (r.underway.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    flush(r);
    for (kit::CachingDeviceAllocator* allocator : r.allocators) {
      allocator->setDiverted(false);
    }
  }
}

}  // namespace

void captureBeginning() noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.underway.fetch_add(1, std::memory_order_acq_rel);
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

bool capturesUnderway() noexcept {
  return registry().underway.load(std::memory_order_acquire) > 0;
}

void divertWhileCapturing(kit::CachingDeviceAllocator& allocator) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (std::find(r.allocators.begin(), r.allocators.end(), &allocator) ==
      r.allocators.end()) {
    r.allocators.push_back(&allocator);
  }
  allocator.setDiverted(r.underway.load(std::memory_order_relaxed) > 0);
}

void routeToCapturePool(DeviceIndex device, Stream stream) {
  if (!capturesUnderway() || stream.id == kDefaultStreamId) return;
  unsigned long long id = 0;
  if (captureStatus(stream, &id) == cudaStreamCaptureStatusNone) return;
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

bool deferFree(DeviceIndex device, void* ptr) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.underway.load(std::memory_order_acquire) == 0) return false;
  try {
    r.frees.push_back({device, ptr});
  } catch (...) {
    return false;
  }
  return true;
}

bool deferUnmap(DeviceIndex device, void* address, std::size_t bytes) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.underway.load(std::memory_order_acquire) == 0) return false;
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  try {
    r.unmaps.push_back({device, begin, begin + bytes});
  } catch (...) {
    return false;
  }
  return true;
}

std::vector<std::pair<void*, std::size_t>> takeBackDeferredUnmaps(void* address,
                                                                  std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = begin + bytes;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  // The pages of the range still mapped, in address order.
  std::vector<DeferredPages> kept;
  std::vector<DeferredPages> pending;
  for (const DeferredPages& pages : r.unmaps) {
    if (pages.end <= begin || pages.begin >= end) {
      pending.push_back(pages);
      continue;
    }
    kept.push_back(
        {pages.device, std::max(pages.begin, begin), std::min(pages.end, end)});
    if (pages.begin < begin) pending.push_back({pages.device, pages.begin, begin});
    if (pages.end > end) pending.push_back({pages.device, end, pages.end});
  }
  std::sort(kept.begin(), kept.end(), [](const DeferredPages& a, const DeferredPages& b) {
    return a.begin < b.begin;
  });
  std::vector<std::pair<void*, std::size_t>> unmapped;
  std::uintptr_t at = begin;
  for (const DeferredPages& pages : kept) {
    if (pages.begin > at)
      unmapped.emplace_back(reinterpret_cast<void*>(at), pages.begin - at);
    at = pages.end;
  }
  if (at < end) unmapped.emplace_back(reinterpret_cast<void*>(at), end - at);
  r.unmaps.swap(pending);
  return unmapped;
}

bool deferRelease(DeviceIndex device, void* base, std::size_t bytes) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const bool waits = std::any_of(
      r.unmaps.begin(), r.unmaps.end(),
      [&](const DeferredPages& p) { return p.begin < begin + bytes && begin < p.end; });
  if (!waits) return false;
  try {
    r.releases.push_back({device, begin, begin + bytes});
  } catch (...) {
    return false;  // released now: its pages stay mapped until the unmap
  }
  return true;
}

bool deferRecord(EventId event, Stream stream) {
  if (!capturesUnderway() || stream.id == kDefaultStreamId) return false;
  unsigned long long id = 0;
  if (captureStatus(stream, &id) == cudaStreamCaptureStatusNone) return false;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  // The capture may have ended meanwhile, and with it the last flush.
  if (r.underway.load(std::memory_order_acquire) == 0) return false;
  r.records.push_back({event, stream});
  return true;
}

bool recordDeferred(EventId event) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return std::any_of(r.records.begin(), r.records.end(),
                     [&](const DeferredRecord& d) { return d.event == event; });
}

void forgetDeferred(EventId event) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.records, [&](const DeferredRecord& d) { return d.event == event; });
}

}  // namespace accel::cuda::detail
