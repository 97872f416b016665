// SegmentSource: what a backend gives the core caching allocator — raw device
// memory, and optionally page mapping and events.
//
// A backend plugs the caching allocator in by implementing two functions,
// allocateSegment and freeSegment (cudaMalloc/cudaFree level: slow, whole
// segments). Everything else has a default:
//  - Page mapping (cuMemAddressReserve/cuMemMap level): a backend whose
//    device has virtual memory returns a granularity > 0 from pageSize() and
//    implements reserveAddressRange/mapPages/unmapPages/releaseAddressRange;
//    the allocator then offers expandable segments.
//  - Events: a backend whose streams run asynchronously implements
//    recordEvent/eventCompleted/streamWaitEvent/releaseEvent so that a block
//    freed while a stream still uses it is held back until that work is done,
//    and so that a free segment can be handed from one stream to another by
//    making the new stream wait. The defaults describe a synchronous device:
//    work is complete when the call that enqueued it returns.
// docs/memory.md shows a backend doing this in a few lines.
//
// Thread-safety: the allocator calls a SegmentSource from any thread, holding
// the device's allocator lock, never re-entrantly; implementations must not
// call back into the allocator.
// Lifetime: must outlive the CachingAllocator that uses it.
#pragma once

#include <cstddef>

#include "accel/device.h"
#include "accel/event.h"
#include "accel/export.h"
#include "accel/memory_stats.h"
#include "accel/stream.h"

namespace accel::memory {

class ACCEL_API SegmentSource {
 public:
  virtual ~SegmentSource();

  // A new segment of exactly `bytes` on device `index`, or nullptr when the
  // device is out of memory (the allocator then frees cache and retries).
  // Throws DeviceError for any other failure.
  [[nodiscard]] virtual void* allocateSegment(DeviceIndex index, std::size_t bytes) = 0;
  // Returns a segment obtained from allocateSegment. Must not throw.
  virtual void freeSegment(DeviceIndex index, void* ptr, std::size_t bytes) noexcept = 0;

  // Device capacity and free bytes for OOM messages and memory fractions.
  // 0 total: unknown (a memory fraction then cannot be applied).
  // The type the getMemoryInfo hook returns (memory_stats.h).
  using DeviceMemoryInfo = accel::DeviceMemoryInfo;
  [[nodiscard]] virtual DeviceMemoryInfo memoryInfo(DeviceIndex index) const noexcept;

  // ---- page mapping (optional; pageSize() == 0 means unsupported) ----
  [[nodiscard]] virtual std::size_t pageSize() const noexcept;
  // Reserves `bytes` of address space (no memory behind it); nullptr if not.
  [[nodiscard]] virtual void* reserveAddressRange(DeviceIndex index, std::size_t bytes);
  virtual void releaseAddressRange(DeviceIndex index, void* base,
                                   std::size_t bytes) noexcept;
  // Backs [address, address + bytes) with memory; false when out of memory.
  [[nodiscard]] virtual bool mapPages(DeviceIndex index, void* address,
                                      std::size_t bytes);
  virtual void unmapPages(DeviceIndex index, void* address, std::size_t bytes) noexcept;

  // ---- events (optional; the defaults describe a synchronous device) ----
  [[nodiscard]] virtual bool hasEvents() const noexcept;
  // Records an event at the current end of `stream`'s work.
  [[nodiscard]] virtual EventId recordEvent(Stream stream);
  [[nodiscard]] virtual bool eventCompleted(EventId event) noexcept;
  // Makes later work on `stream` wait for `event`.
  virtual void streamWaitEvent(Stream stream, EventId event);
  virtual void releaseEvent(EventId event) noexcept;
  // Blocks until the event completed (used by emptyCache and the OOM path).
  virtual void synchronizeEvent(EventId event);
};

}  // namespace accel::memory
