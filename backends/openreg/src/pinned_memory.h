// PinnedMemory: openreg's allocator of "page-locked" host memory, the core's
// PinnedCachingAllocator over openreg's pages.
//
// Pinned memory is host memory the backend knows about. The raw blocks are
// page-aligned mmap ranges recorded in the runtime's kit::AddressMap (so
// getDeviceFromPtr and isPinnedPtr are one lookup, interior pointers
// included); the core cache (accel/memory/pinned_caching_allocator.h) keeps
// freed blocks, still pinned, for reuse. An asynchronous copy from or to a
// pinned block records its stream on the block (the core's copies group for
// the hooks, copyAsync() through recordStreamAt), so a block freed while
// such a copy is queued is reused only after openreg's event on that stream
// completed. openreg does not mlock() the pages: a simulated
// device gains nothing from it, and containers allow only a little locked
// memory (RLIMIT_MEMLOCK); what frameworks need to test (which allocator
// memory came from, isPinnedPtr, reuse after the copy) behaves as on real
// devices.
//
// Thread-safety: all members are thread-safe.
// Lifetime: one object for the process, never destroyed.
#pragma once

#include <atomic>
#include <cstddef>

#include "accel/allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "accel/memory/segment_source.h"

namespace accel::openreg::detail {

class PinnedMemory final : public Allocator {
 public:
  static PinnedMemory& instance() noexcept;

  // Page-aligned host memory; 0 bytes gives an empty DataPtr. Throws
  // OutOfMemory when mmap fails even after the cache was freed.
  [[nodiscard]] DataPtr allocate(std::size_t bytes) override;
  // The CPU: pinned memory is host memory.
  [[nodiscard]] Device device() const noexcept override;

  // Notes that `stream` uses the pinned block containing ptr; false when ptr
  // is not in an allocated pinned block. Throws what recording an event
  // throws.
  bool recordStreamAt(const void* ptr, Stream stream);
  // Unpins cached blocks no copy uses any more.
  void emptyCache() { cache_.emptyCache(); }
  [[nodiscard]] MemoryStats stats() const { return cache_.stats(); }
  // The core cache, which the hooks name for hostMemoryStats and copies.
  [[nodiscard]] memory::PinnedCachingAllocator& cache() noexcept { return cache_; }

 private:
  // mmap'ed pages recorded in the address map; openreg's events.
  class PageSource final : public memory::SegmentSource {
   public:
    void* allocateSegment(DeviceIndex, std::size_t bytes) override;
    void freeSegment(DeviceIndex, void* ptr, std::size_t bytes) noexcept override;
    bool hasEvents() const noexcept override { return true; }
    EventId recordEvent(Stream stream) override;
    bool eventCompleted(EventId event) noexcept override;
    void releaseEvent(EventId event) noexcept override;
    void synchronizeEvent(EventId event) override;
  };

  PinnedMemory() : cache_(source_) {}
  static void free(void* context) noexcept;

  PageSource source_;
  memory::PinnedCachingAllocator cache_;
  std::atomic<DeleterFn> cache_deleter_{nullptr};
};

}  // namespace accel::openreg::detail
