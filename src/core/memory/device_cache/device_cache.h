// DeviceCache: the caching allocator's state and rules for one device.
//
// CachingAllocator (accel/memory/caching_allocator.h) owns one DeviceCache per
// device and routes every call to it. Blocks and segments are in block.h, the
// free sets in block_pool.h. A freed block may first be held in a reuse list
// (ReuseList) for the next request of its size and stream; held blocks are
// merged before any other lookup.
//
// What is not the allocate and free pair's path is a part held by value,
// a type that owns its state and is tested alone (docs/memory.md lists
// them): HistoryRecorder, PrivatePools, ExpandableSegments, PendingFrees,
// and OutOfMemoryReport, made per error. The device cache keeps the lock,
// the pools, the segments and their blocks, the figures, the thread caches
// and fork handling, and calls the parts around them.
//
// Its implementation is one file per concern: device_cache.cpp (the
// allocate and free paths, block search, split and merge, reuse lists),
// device_segments.cpp (construction; segments and expandable mapping,
// giving memory back), device_stream_events.cpp (stream uses, pending
// frees, hand-off between streams), device_stats.cpp (statistics, the
// out-of-memory path), device_history.cpp, device_snapshot.cpp,
// device_settings.cpp (settings, limit, private pools), device_fork.cpp
// (fork(): every live device's lock held across it, and the child's rule
// for inherited memory), device_thread_caches.cpp, device_lookup.cpp,
// parked_block.{h,cpp} (the large pool's one-deep cache).
//
// Thread-safety: every public member takes the device's mutex; OutOfMemory
// observers are called after it is released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/biased_mutex.h"
#include "memory/block.h"
#include "memory/block_pool.h"
#include "memory/block_stats.h"
#include "memory/device_cache/expandable_segments.h"
#include "memory/device_cache/history_recorder.h"
#include "memory/device_cache/out_of_memory_report.h"
#include "memory/device_cache/pending_frees.h"
#include "memory/device_cache/private_pools.h"
#include "memory/device_cache/reserve_cap.h"
#include "memory/reuse_lists.h"
#include "memory/stack_capture.h"
#include "memory/thread_cache.h"
#include "memory/trace_clock.h"

namespace accel::memory::detail {

using accel::detail::BiasedMutex;

// The deleter of every DataPtr a CachingAllocator hands out: frees the block
// (context) into its device's cache.
void freeCachedBlock(void* context) noexcept;

class DeviceCache {
 public:
  // Device `index` of `allocator`; its OutOfMemory reports go to `oom_sink`
  // (the allocator's observers), which must outlive it.
  DeviceCache(CachingAllocator& allocator, DeviceIndex index, AllocatorSettings settings,
              const OutOfMemorySink& oom_sink);
  ~DeviceCache();
  DeviceCache(const DeviceCache&) = delete;
  DeviceCache& operator=(const DeviceCache&) = delete;

  // Throws OutOfMemory after the observers ran.
  [[nodiscard]] Block* allocate(std::size_t bytes, StreamId stream);
  // allocate() in two steps, for CachingAllocator::allocate's path without a
  // call: the calling thread's cache's block for the request, or null; then
  // allocateLocked (throws as allocate does).
  [[nodiscard]] Block* allocateFromThreadCache(std::size_t bytes,
                                               StreamId stream) noexcept {
    ThreadCache* cache = findThreadCache(this);
    return cache != nullptr ? takeLocal(*cache, bytes, stream) : nullptr;
  }
  [[nodiscard]] Block* allocateLocked(std::size_t bytes, StreamId stream);
  // allocateLocked for a request above kSmallSize: no thread cache or reuse
  // list looked at (a large block is never held). Inline, defined in
  // device_cache.cpp for CachingAllocator::allocate and allocateLocked
  // there: callable there only.
  [[nodiscard]] inline Block* allocateLarge(std::size_t bytes, StreamId stream);
  // CachingAllocator::allocate for everything but a thread cache's hit and a
  // large request: a bad device or stream (throws), 0 bytes, allocateLocked.
  [[nodiscard]] static DataPtr allocateUncommon(CachingAllocator& allocator,
                                                DeviceIndex index, std::size_t bytes,
                                                Stream stream);
  // The out-of-memory path for `bytes` as if the device refused every request
  // (fault injection): frees the cache, then throws OutOfMemory after the
  // observers ran.
  [[noreturn]] void failAsOutOfMemory(std::size_t bytes, StreamId stream);
  void free(Block* block) noexcept;
  void recordStream(Block* block, StreamId stream);

  void setSettings(const AllocatorSettings& settings);
  [[nodiscard]] AllocatorSettings settings() const;
  void setCap(const ReserveCap& cap);

  void retainPool(MempoolId pool);
  void releasePool(MempoolId pool);
  void beginAllocateToPool(MempoolId pool, StreamId stream);
  void endAllocateToPool(MempoolId pool, StreamId stream);

  // stats and snapshotInto first return held blocks to the free set.
  [[nodiscard]] MemoryStats stats();
  void resetPeakStats();
  void resetAccumulatedStats();
  void emptyCache();
  void recordHistory(const MemoryHistoryOptions& options);
  // Records a "snapshot" trace event (the moment a snapshot was taken).
  void noteSnapshot();
  void snapshotInto(MemorySnapshot& out, bool include_trace);

  // Lookups (device_lookup.cpp). holds: `ptr` is in one of the segments.
  // findBlock: the handed-out block holding `ptr`, as BlockInfo. useBlock:
  // that block with one more use, its facts in `info`; nullptr when there is
  // none or it was freed. retainUse/releaseUse count a use up and down; the
  // last release of a block freed meanwhile frees it.
  [[nodiscard]] bool holds(const void* ptr) const noexcept;
  [[nodiscard]] std::optional<BlockInfo> findBlock(const void* ptr) const;
  [[nodiscard]] Block* useBlock(const void* ptr, BlockInfo& info);
  void retainUse(Block* block) noexcept;
  void releaseUse(Block* block) noexcept;
  // The thread-cache registry's (thread_cache.cpp), with its lock held:
  // link a new cache, or give an exiting thread's cache back (takes the
  // device's lock; its blocks are returned and its figures absorbed).
  void linkThreadCache(ThreadCache* cache) noexcept;
  void retireThreadCache(ThreadCache* cache) noexcept;

  // The fork handlers' (device_fork.cpp), in this order on the forking
  // thread: lockForFork holds the device (its lock, its bias withdrawn, every
  // thread cache drained and claimed); then the parent's unlock, or the
  // child's, which also makes every segment inherited (see there).
  void lockForFork() noexcept;
  void unlockAfterForkInParent() noexcept;
  void unlockAfterForkInChild() noexcept;
  // The same for every live device (the core's fork callbacks); the list's
  // lock is held from lockLive to unlockLive.
  static void lockLive() noexcept;
  static void unlockLive(bool in_child) noexcept;

  [[nodiscard]] CachingAllocator& allocator() const noexcept { return allocator_; }
  [[nodiscard]] DeviceIndex index() const noexcept { return index_; }

 private:
  // Everything below requires mutex_.
  // The block (of any state) holding `ptr`, or nullptr outside every segment.
  [[nodiscard]] Block* blockAt(const void* ptr) const noexcept;
  [[nodiscard]] BlockInfo infoOf(const Block* block) const noexcept;
  // free of a held pool's block when the thread's cache did not take it.
  void freeLocked(Block* block) noexcept;
  // free of a block of a pool that does not hold (large_, a private pool's).
  void freeUnheld(Block* block) noexcept;
  // free() when the thread's cache did not take the block (`cache`: the
  // thread's cache, null when it has none yet).
  void freeUncached(Block* block, ThreadCache* cache) noexcept;
  [[nodiscard]] Block* allocateSlow(BiasedMutex::Guard& lock, std::size_t bytes,
                                    StreamId stream);
  void freeSlow(Block* block) noexcept;
  // allocate() when no cached block fits: a new segment, the hand-off, the
  // retries, OutOfMemory.
  [[nodiscard]] Block* allocateFresh(BiasedMutex::Guard& lock, BlockPool& pool,
                                     std::size_t rounded, std::size_t bytes,
                                     StreamId stream);
  // free() of a block other streams used: one event per stream; the block
  // returns to the cache once they have all completed.
  void recordFreeEvents(Block* block) noexcept;
  [[nodiscard]] BlockPool& poolFor(StreamId stream, std::size_t rounded);
  // The best-fitting free block for the request, or null.
  [[nodiscard]] Block* findFree(BlockPool& pool, StreamId stream, std::size_t rounded);
  // Hands out the free block at `found` (split in place when worth it).
  [[nodiscard]] Block* takeFree(BlockPool& pool, Block* found, std::size_t rounded,
                                std::size_t requested);
  [[nodiscard]] Block* newSegment(BlockPool& pool, StreamId stream, std::size_t rounded);
  [[nodiscard]] Block* growExpandable(BlockPool& pool, StreamId stream,
                                      std::size_t rounded);
  [[nodiscard]] Block* handOff(BlockPool& pool, StreamId stream, std::size_t rounded);
  // For a block out of the free set: splits off the rest when worth it,
  // then marks it allocated.
  void splitAndMark(Block* block, std::size_t rounded, std::size_t requested);
  void markAllocated(Block* block, std::size_t requested);
  // The same for a block of `small`'s pools, when the caller knows which.
  void markAllocated(Block* block, std::size_t requested, bool small);
  // Calls the host capture with the lock released (it may take the host's
  // lock, the GIL, which a thread waiting for ours may hold).
  [[gnu::noinline, gnu::cold]] void captureHostStack(BiasedMutex::Guard& lock);
  // stamp: the caller's TraceClock timestamp for history (0: read the clock).
  // record_completion: add the free_completed history event (false when it
  // was added as the block was held).
  void returnBlock(Block* block, std::int64_t stamp = 0,
                   bool record_completion = true) noexcept;
  // The device's reuse lists (reuse_lists.h): hold a freed block of a pool
  // that holds (the default small and uniform pools; false when its list is
  // full; large-pool blocks are never held, see docs/design-notes.md "Large
  // blocks are not held").
  // releaseHeld returns the device's held blocks of `stream` and the calling
  // thread's cache's, all but the uniform pool's, to the free set (a miss of
  // small_ on `stream`: no other thread is stopped; a uniform pool's blocks
  // cannot merge into small_'s, nor another stream's serve or merge with
  // this one's); releaseAllHeld every block of every thread's (stats,
  // snapshots, settings, emptyCache, the OOM path).
  [[nodiscard]] bool hold(Block* block, std::int64_t stamp) noexcept;
  // The large pool's parked block (parked_block.h): park takes a freed
  // block that its cut can be undone for (last_cut_) and does the free's
  // work but the merge; unpark hands it back for a request the undone cut
  // would serve again, doing the allocation's work but the search and the
  // split; settleParked merges it, as the free would have. Each returns
  // false, or does nothing, when that does not apply.
  [[nodiscard]] bool park(Block* block) noexcept;
  // park's figures; with its history entries and the stack let go
  // (parked_block.cpp, out of line).
  inline void countPark(Block* block) noexcept;
  [[gnu::noinline]] void parkRecorded(Block* block) noexcept;
  // unpark: parked_ is not null.
  [[nodiscard]] Block* unpark(std::size_t rounded, std::size_t bytes, StreamId stream);
  void settleParked() noexcept;
  void releaseHeld(StreamId stream) noexcept;
  // Before a uniform pool grows: the device's held blocks and the calling
  // thread's, all of them.
  void releaseHeldWithUniform() noexcept;
  void releaseAllHeld() noexcept;

  // Thread caches (thread_cache.h). The lock-free paths of allocate and free:
  // a block of this thread's cache, or null / false for the device's path.
  [[nodiscard]] Block* takeLocal(ThreadCache& cache, std::size_t bytes,
                                 StreamId stream) noexcept;
  // holdLocal: `block`'s pool holds.
  [[nodiscard]] bool holdLocal(ThreadCache& cache, Block* block) noexcept;
  // Empties a cache the caller may touch (its own, or claimed): its blocks
  // to the free set, its figures absorbed.
  void drainThreadCache(ThreadCache& cache) noexcept;
  // The same for `stream`'s blocks of the non-uniform sizes only: a uniform
  // pool's and other streams' stay held, and so does their part of the
  // figures.
  void drainThreadCacheButUniform(ThreadCache& cache, StreamId stream) noexcept;
  // Adds a cache's figures to the device's (block_stats_) and clears them:
  // the device's figures are then exact (a claim, to raise a peak).
  void absorbFigures(ThreadCache& cache) noexcept;
  // The same but for the part of the `held` blocks the cache still holds
  // (held_bytes), which stays so that it may serve them (takeLocal): the
  // device's figures count those blocks as allocated until the next
  // absorbFigures, so they stay at or above the true ones.
  void absorbFiguresButHeld(ThreadCache& cache, std::int64_t held) noexcept;
  // Every other thread's cache claimed, seen outside, drained; the calling
  // thread's drained. They stay claimed (their owners use the device's path)
  // until releaseThreadCaches, which the caller runs before unlocking.
  void claimThreadCaches(bool drain_blocks) noexcept;
  void releaseThreadCaches() noexcept;
  // While a ClaimedThreadCaches lives, no thread cache is used: the fields
  // the owners read without the lock (their kNotServing, divisions) may change.
  class ClaimedThreadCaches;
  // Counts an allocation in block_stats_; when it would raise a peak, the
  // thread caches' figures are absorbed first, so the peak is exact.
  void countAllocation(bool small, std::size_t size, std::size_t requested) noexcept;
  // Re-derives local_ok_ (thread caches claimed).
  void updateLocalOk() noexcept;
  // returnBlock for a block whose pending events have all completed.
  void returnPending(Block* block) noexcept;
  void processEvents() noexcept;
  // Re-derives plain_ and tracing_; called wherever a condition changes.
  void updatePlain() noexcept;
  void synchronizeEvents();
  // Frees whole free segments: only those >= max_split_size when oversize_only;
  // private pools only once released. Returns bytes given back.
  std::size_t releaseCached(bool oversize_only) noexcept;
  void releaseSegment(Block* block) noexcept;
  void shrinkExpandable(Segment* segment) noexcept;
  // Gives back the address range of an expandable segment with nothing
  // mapped, and forgets the segment.
  void releaseExpandableRange(Segment* segment) noexcept;
  void garbageCollect() noexcept;
  void maybeReleasePrivatePool(PrivatePool* pool) noexcept;
  [[nodiscard]] bool fitsLimit(std::size_t bytes) const noexcept;
  // Counts and records the OOM, unlocks, tells the sink, throws.
  // `rounded`: the request as rounded (as asked, when above kMaxRequest).
  [[noreturn]] void raiseOutOfMemory(BiasedMutex::Guard& lock, std::size_t rounded,
                                     StreamId stream);
  void adjustInactiveSplit(const Block* block, int sign) noexcept;
  // A block object (recycled when one is spare) for that piece of `segment`.
  [[nodiscard]] Block* makeBlock(std::byte* ptr, std::size_t size, StreamId stream,
                                 BlockPool& pool, Segment* segment);
  // A new segment at `base`, owned by segments_; size, reserved and the
  // expandable flag are the caller's to set.
  [[nodiscard]] Segment* addSegment(void* base, StreamId stream, BlockPool& pool);
  void recycle(Block* block) noexcept;
  // Fork children (device_fork.cpp). A segment made before the last fork
  // that made this process: its memory is the parent's device memory, which
  // a child must neither use nor give back.
  [[nodiscard]] bool inherited(const Segment* segment) const noexcept {
    return segment->fork_generation != fork_generation_;
  }
  // Once per child, before its first allocation or release: inherited
  // memory leaves circulation (free blocks out of the free sets, growing
  // segments and pending events forgotten), so nothing inherited is handed
  // out again or released.
  void setAsideInherited() noexcept;
  // In the live devices' list from the end of construction to the start of
  // destruction, so that a fork never holds a device being made or unmade.
  void linkLive() noexcept;
  void unlinkLive() noexcept;
  template <typename>
  friend class LiveList;  // links live_prev_/live_next_

  CachingAllocator& allocator_;
  SegmentSource& source_;
  const DeviceIndex index_;

  mutable BiasedMutex mutex_;  // the device lock (docs/memory.md)
  AllocatorSettings settings_;
  ReserveCap cap_;
  // The default pools. A request of the uniform size (size_rules.h) goes to
  // uniform_; any other small one to small_.
  BlockPool small_{true, nullptr, /*may_hold=*/true};
  BlockPool large_{false, nullptr};
  BlockPool uniform_{true, nullptr, /*may_hold=*/true};
  PrivatePools private_pools_;  // graph capture's pools and their streams
  SegmentMap segments_;         // by base address
  // How many forks made this process from the one that made the device (a
  // segment records the value it was made at), and whether this child has
  // yet to set its inherited memory aside.
  std::uint32_t fork_generation_ = 0;
  bool set_aside_pending_ = false;
  // The live devices' list (device_fork.cpp), under its lock.
  DeviceCache* live_prev_ = nullptr;
  DeviceCache* live_next_ = nullptr;
  Block* spare_blocks_ = nullptr;  // recycled Block objects, linked by `next`
  ReuseLists reuse_;               // the device's held blocks
  // The large pool's one-deep cache (parked_block.h): the block last cut
  // from the front of one of large_'s free blocks, with large_'s change
  // count just after the cut; and that block once freed with nothing else
  // changed in large_: parked, counted and recorded as freed and merged,
  // its rest still in the free set (null: none).
  Block* last_cut_ = nullptr;
  std::uint64_t last_cut_changes_ = 0;
  Block* parked_ = nullptr;

  // Thread caches: the caches (linked by
  // device_next; changed under the registry's lock and this lock), and
  // whether they may serve now (the setting, barrier support, and nothing
  // rare on: no private pool, no tracing, no stacks, no oversize rule).
  // Owners read copies of local_ok_ and the rounding setting in their caches
  // (ThreadCache::keep_out's kNotServing, divisions), written only while
  // every cache is claimed (ClaimedThreadCaches).
  ThreadCache* thread_caches_ = nullptr;
  bool local_ok_ = false;
  std::atomic<bool> caches_enabled_{false};  // the setting, and barrier support
  // Nothing rare is on: no free waits for events, no stream allocates to a
  // private pool, no stacks are captured, no oversize rule (max_split_size
  // 0). The reuse-list fast paths of allocate and free test this one flag
  // instead of each condition, and tracing_ (history records alloc and free
  // events) for their trace entries.
  bool plain_ = true;
  bool tracing_ = false;
  MemoryStats stats_;       // all but the block figures
  BlockStats block_stats_;  // allocated, active, requested, inactive split

  // The parts only rare paths use, after everything the pair reads (whose
  // places within their cache lines they leave as they were).
  HistoryRecorder history_;        // recordMemoryHistory's ring, stacks and clock
  ExpandableSegments expandable_;  // the growing segments' ranges and pages
  PendingFrees pending_;           // blocks waiting for other streams' events
  const OutOfMemorySink& oom_sink_;
};

class DeviceCache::ClaimedThreadCaches {
 public:
  // With the device's lock held. drain_blocks false: figures only.
  explicit ClaimedThreadCaches(DeviceCache& device, bool drain_blocks = true) noexcept
      : device_(device) {
    device.claimThreadCaches(drain_blocks);
  }
  ~ClaimedThreadCaches() { device_.releaseThreadCaches(); }
  ClaimedThreadCaches(const ClaimedThreadCaches&) = delete;
  ClaimedThreadCaches& operator=(const ClaimedThreadCaches&) = delete;

 private:
  DeviceCache& device_;
};

}  // namespace accel::memory::detail
