// PinnedCachingAllocator: the core's caching allocator of page-locked host
// memory, generic over a backend's raw pinned allocate/free.
//
// Pinning host memory is slow (it maps and locks pages, often synchronising
// the device), so freed pinned blocks are cached by size (rounded up to a
// power of two, at least 512 B) and handed out again. A block used by a copy
// on some stream (recordStream) is reused only once the events recorded on
// those streams at free time have completed. isPinnedPtr answers for interior
// pointers in O(log n) over every block the cache holds.
//
// The SegmentSource gives the host memory: allocateSegment/freeSegment with
// device index 0 allocate and free pinned host memory, and its events (if
// any) are the device's events.
//
// fork(): the core's fork callbacks hold every live pinned cache's mutex
// across fork() (src/core/memory/pinned_fork.cpp), and in a child a block
// made before the fork is the parent's: its free leaks (counted freed, active
// for good) and nothing inherited is handed out again or given back to the
// source (docs/lifecycle.md, "fork()").
//
// Thread-safety: every member function is thread-safe (one mutex).
// Lifetime: outlives its DataPtrs (backends keep it for the process lifetime);
// the source must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "accel/allocator.h"
#include "accel/export.h"
#include "accel/memory/segment_source.h"
#include "accel/memory_stats.h"

namespace accel::memory {

namespace detail {
template <typename T>
class LiveList;  // the live caches' list across fork() (src/core/memory)
}  // namespace detail

class ACCEL_API PinnedCachingAllocator final : public Allocator {
 public:
  explicit PinnedCachingAllocator(SegmentSource& source);
  ~PinnedCachingAllocator() override;

  // Page-locked host memory of at least `bytes` (0: an empty DataPtr).
  // Throws OutOfMemory when the source cannot pin more, even after the cache
  // was freed.
  [[nodiscard]] DataPtr allocate(std::size_t bytes) override;
  [[nodiscard]] Device device() const noexcept override;
  // The block behind `data` is in use by `stream` until its work so far is
  // done. Throws InvalidArgument for a DataPtr from elsewhere.
  void recordStream(const DataPtr& data, Stream stream);
  // The same for the allocated block that contains `ptr` (interior pointers
  // count), for callers that hold a raw pointer, such as an asynchronous
  // copy. Returns false, changing nothing, when no allocated block of this
  // cache contains it.
  bool recordStreamAt(const void* ptr, Stream stream);
  // True for any address inside a block this cache holds (allocated or
  // cached). Never throws.
  [[nodiscard]] bool isPinnedPtr(const void* ptr) const noexcept;
  // The block that holds `ptr` (interior pointers count), allocated or
  // cached; nullopt when no block of this cache holds it. For checks such as
  // a copy's host range (does it fit in what was allocated, was it freed).
  // Never throws.
  struct BlockInfo {
    void* base = nullptr;       // the block's first byte: its DataPtr's pointer
    std::size_t size = 0;       // the pinned bytes (the request rounded up)
    std::size_t requested = 0;  // the bytes its last owner asked for
    bool allocated = false;     // false: freed (cached, or held back for a copy)
  };
  [[nodiscard]] std::optional<BlockInfo> findBlock(const void* ptr) const noexcept;
  // Unpins every cached block that is not in use.
  void emptyCache();
  // allocated/reserved bytes, allocations, segments (pinned blocks), active,
  // num_device_alloc/free; all figures in the "all" and large-pool fields.
  [[nodiscard]] MemoryStats stats() const;
  void resetPeakStats();

 private:
  struct Block;
  static void freeFromDataPtr(void* context) noexcept;
  void free(Block* block) noexcept;
  // Require mutex_.
  void processEvents() noexcept;
  void makeAvailable(Block* block) noexcept;
  void releaseCached() noexcept;
  // Fork children (pinned_fork.cpp). A block made before the last fork that
  // made this process is the parent's memory.
  [[nodiscard]] bool inherited(const Block* block) const noexcept;
  // Once per child, before its first allocation or release: inherited cached
  // blocks and pending events leave circulation (require mutex_).
  void setAsideInherited() noexcept;
  // The live pinned caches' list (pinned_fork.cpp), from the end of
  // construction to the start of destruction.
  void linkLive() noexcept;
  void unlinkLive() noexcept;
  friend struct PinnedForkAccess;
  template <typename>
  friend class detail::LiveList;  // links live_prev_/live_next_

  SegmentSource& source_;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, std::unique_ptr<Block>> blocks_;  // by address
  std::multimap<std::size_t, Block*> available_;             // by size
  std::vector<std::pair<EventId, Block*>> pending_;
  MemoryStats stats_;
  // How many forks made this process from the one that made the cache (a
  // block records the value it was made at), and whether this child has yet
  // to set its inherited memory aside. Under mutex_.
  std::uint32_t fork_generation_ = 0;
  bool set_aside_pending_ = false;
  // The live list (pinned_fork.cpp), under its lock.
  PinnedCachingAllocator* live_prev_ = nullptr;
  PinnedCachingAllocator* live_next_ = nullptr;
};

}  // namespace accel::memory
