#include "capture_registry.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "accel/error.h"
#include "cuda_error.h"
#include "cuda_memory.h"
#include "current_device.h"
#include "events.h"
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

struct DeferredRecord {
  EventId event = 0;
  Stream stream;
};

struct Registry {
  std::mutex mutex;
  std::atomic<int> underway{0};  // read without the lock on fast paths
  std::vector<Capture> captures;
  std::vector<DeferredFree> frees;
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
}

}  // namespace

void captureBegan(unsigned long long capture_id, DeviceIndex device, MempoolId pool,
                  Stream origin) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.captures.push_back({capture_id, device, pool, origin, {}});
  r.underway.fetch_add(1, std::memory_order_acq_rel);
  for (kit::CachingDeviceAllocator* allocator : r.allocators)
    allocator->setDiverted(true);
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
  if (r.underway.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    flush(r);
    for (kit::CachingDeviceAllocator* allocator : r.allocators) {
      allocator->setDiverted(false);
    }
  }
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
