#include "capture_deferrals.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "cuda_error.h"
#include "current_device.h"
#include "device_memory.h"
#include "events.h"
#include "page_mapping.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

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
  adapter::Stream stream;
};

struct Deferrals {
  std::mutex mutex;
  std::atomic<int> underway{0};  // read without the lock on fast paths
  std::vector<DeferredFree> frees;
  std::vector<DeferredPages> unmaps;    // disjoint
  std::vector<DeferredPages> releases;  // after their unmaps
  std::vector<DeferredRecord> records;
};

Deferrals& deferrals() {
  static auto* const d = new Deferrals();  // never destroyed
  return *d;
}

// Frees a cudaMalloc segment with its device's context current (any
// context frees it, by unified addressing, when that one cannot be made).
void freeNow(DeviceIndex device, void* ptr) noexcept {
  try {
    DeviceContext context(device);
    (void)succeeded(cudaFree(ptr));
  } catch (...) {
    (void)succeeded(cudaFree(ptr));
  }
}

// Unmaps pages after their device's queued work, which may still use them
// (cudaFree waits for it; cuMemUnmap does not); `synchronise` false when
// the caller waited for the device already.
void unmapNow(DeviceIndex device, void* address, std::size_t bytes,
              bool synchronise) noexcept {
  try {
    DeviceContext context(device);
    if (synchronise) (void)succeeded(cudaDeviceSynchronize());
    pageMapping().unmap(address, bytes);
  } catch (...) {
    // No context: the pages stay mapped (a leak, never a fault).
  }
}

// The lock is held; the last capture has ended. What was deferred runs now,
// on streams that no longer capture.
void flush(Deferrals& r) noexcept {
  for (const DeferredRecord& record : r.records) {
    try {
      recordEvent(record.event, record.stream);
    } catch (...) {
      // The event or stream is gone; the allocator's query then fails and
      // the block waits for emptyCache's synchronisation.
    }
  }
  r.records.clear();
  for (const DeferredFree& free : r.frees) freeNow(free.device, free.ptr);
  r.frees.clear();
  std::vector<DeviceIndex> synchronised;
  for (const DeferredPages& pages : r.unmaps) {
    const bool first = std::find(synchronised.begin(), synchronised.end(),
                                 pages.device) == synchronised.end();
    unmapNow(pages.device, reinterpret_cast<void*>(pages.begin), pages.end - pages.begin,
             first);
    if (first) synchronised.push_back(pages.device);
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

}  // namespace

void deferWhileCapturing() noexcept {
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  r.underway.fetch_add(1, std::memory_order_acq_rel);
}

bool captureNoLongerUnderway() noexcept {
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  if (r.underway.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
  flush(r);
  return true;
}

bool capturesUnderway() noexcept {
  return deferrals().underway.load(std::memory_order_acquire) > 0;
}

// Both run the call now with the lock held: deferWhileCapturing waits for
// it, so no capture begins between the check and the call (the race that
// invalidated another thread's Global capture as it began).
void freeSegment(DeviceIndex device, void* ptr) noexcept {
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  if (r.underway.load(std::memory_order_acquire) > 0) {
    try {
      r.frees.push_back({device, ptr});
      return;
    } catch (...) {
      // The list cannot grow: freed now (a prohibited call, never a leak).
    }
  }
  freeNow(device, ptr);
}

void unmapPages(DeviceIndex device, void* address, std::size_t bytes) noexcept {
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  if (r.underway.load(std::memory_order_acquire) > 0) {
    const auto begin = reinterpret_cast<std::uintptr_t>(address);
    try {
      r.unmaps.push_back({device, begin, begin + bytes});
      return;
    } catch (...) {
      // The list cannot grow: unmapped now.
    }
  }
  unmapNow(device, address, bytes, true);
}

std::vector<std::pair<void*, std::size_t>> takeBackDeferredUnmaps(void* address,
                                                                  std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = begin + bytes;
  Deferrals& r = deferrals();
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
  Deferrals& r = deferrals();
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

bool deferRecord(EventId event, adapter::Stream stream) {
  unsigned long long id = 0;
  if (!capturesUnderway() || !isCapturing(stream, &id)) return false;
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  // The capture may have ended meanwhile, and with it the last flush.
  if (r.underway.load(std::memory_order_acquire) == 0) return false;
  r.records.push_back({event, stream});
  return true;
}

bool recordDeferred(EventId event) noexcept {
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  return std::any_of(r.records.begin(), r.records.end(),
                     [&](const DeferredRecord& d) { return d.event == event; });
}

void forgetDeferred(EventId event) noexcept {
  Deferrals& r = deferrals();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.records, [&](const DeferredRecord& d) { return d.event == event; });
}

}  // namespace accel::cuda::detail
