// DeviceCache: the allocate and free paths — the thread caches' and reuse
// lists' hits, the choice of pool, best-fit search, split on allocate and
// merge on free, a miss's returns of held blocks (device_cache.h). Segments
// (and construction), stream events, statistics, history and snapshots are
// in the device_*.cpp files beside this one.
#include "memory/device_cache/device_cache.h"
#include "memory/device_cache/parked_block.h"

#include <algorithm>
#include <bit>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/memory/size_rules.h"
#include "hooks/fork_handlers.h"

namespace accel::memory::detail {

using Action = MemoryTraceEntry::Action;

// ---- allocation ----

// The hot paths (allocate from the cache, free into it) are compiled as one
// function each, their helpers inlined (flatten): so the helpers they call on
// every pair live in this file or in headers. Everything rare is kept out of
// line (allocateFresh, in device_segments.cpp) so that they stay small.
#define ACCEL_HOT [[gnu::flatten]]

// The fast path is a small function of its own, so that it does not pay
// the frame and register saves of the whole allocator: a held block of the
// rounded size on this stream while nothing rare is on (plain_: a default
// pool, no oversize count, no stack to capture; tracing_ adds the trace
// entries). Anything else is allocateSlow, with the lock held. Flattened:
// kit::CachingDeviceAllocator calls it directly (takeLocal inline).
ACCEL_HOT Block* DeviceCache::allocate(std::size_t bytes, StreamId stream) {
  if (ThreadCache* cache = findThreadCache(this)) [[likely]] {
    if (Block* block = takeLocal(*cache, bytes, stream)) [[likely]]
      return block;
  }
  return allocateLocked(bytes, stream);
}

// A large-pool request (bytes > kSmallSize): never held, so no thread cache
// or reuse list is looked at; the parked block (parked_block.h) or
// allocateSlow. CachingAllocator::allocate inlines it for a large request
// whose device and stream it checked; allocateLocked for one that comes
// through DeviceCache::allocate.
inline Block* DeviceCache::allocateLarge(std::size_t bytes, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  if (plain_ && parked_ != nullptr) [[likely]] {
    const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
    if (rounded >= bytes) [[likely]] {  // else it wrapped: allocateSlow refuses it
      if (Block* block = unpark(rounded, bytes, stream)) return block;
    }
  }
  return allocateSlow(lock, bytes, stream);
}

// The device's lock, then its own reuse lists or allocateSlow: out of line,
// so that the thread cache's path above pays no frame for it.
ACCEL_HOT [[gnu::noinline]] Block* DeviceCache::allocateLocked(std::size_t bytes,
                                                               StreamId stream) {
  if (bytes > kSmallSize) return allocateLarge(bytes, stream);
  BiasedMutex::Guard lock(mutex_);
  if (plain_) [[likely]] {
    // A small request does not wrap when rounded, and stays small.
    const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
    if (Block* block = reuse_.take(stream, rounded)) {
      block->requested = bytes;
      countAllocation(/*small=*/true, block->size, bytes);  // held: small
      if (tracing_) [[unlikely]]
        history_.traceAllocation(block);
      return block;
    }
  }
  return allocateSlow(lock, bytes, stream);
}

ACCEL_HOT [[gnu::noinline]] Block* DeviceCache::allocateSlow(BiasedMutex::Guard& lock,
                                                             std::size_t bytes,
                                                             StreamId stream) {
  // Checked before any size rule: they would wrap (a 0-byte segment).
  if (bytes > kMaxRequest) [[unlikely]]
    raiseOutOfMemory(lock, bytes, stream);
  // A fork child (every allocation comes here there): an allocator kept from
  // before the fork must not call the source of a backend the child cannot
  // use (the driver's threads are gone; the call, or the first copy, hangs).
  if (fork_generation_ != 0 && isPoisonedByFork(allocator_.deviceType())) [[unlikely]]
    accel::detail::throwForkRefusal("allocate()",
                                    deviceTypeName(allocator_.deviceType()));
  if (set_aside_pending_) [[unlikely]]
    setAsideInherited();
  const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
  if (history_.hostCapture()) [[unlikely]]
    captureHostStack(lock);  // first: the lock is released and taken again
  if (!pending_.empty()) processEvents();
  BlockPool& pool = poolFor(stream, rounded);
  if (parked_ != nullptr && &pool == &large_)
    settleParked();  // it may not serve (parked_block.h)
  // Only the default small and uniform pools' blocks are held: a miss there
  // takes one of the device's; a miss of small_ also returns the others of
  // its stream (but a uniform pool's), with this thread's, so that best fit
  // chooses among merged blocks. Held blocks cannot serve, nor merge into, another
  // pool's; in a uniform pool every block serves every request.
  if (pool.holds) {
    if (Block* block = reuse_.take(stream, rounded)) {
      markAllocated(block, bytes);
      return block;
    }
    if (&pool == &small_) releaseHeld(stream);
  }
  if (Block* found = findFree(pool, stream, rounded))
    return takeFree(pool, found, rounded, bytes);
  if (&pool == &uniform_) {
    // The uniform pool is full: before it grows, its blocks this thread and
    // the device hold go back (a cache may hold blocks it cannot serve,
    // takeLocal), so that held blocks never cost a segment.
    releaseHeldWithUniform();
    if (Block* found = findFree(pool, stream, rounded))
      return takeFree(pool, found, rounded, bytes);
  }
  return allocateFresh(lock, pool, rounded, bytes, stream);
}

// The DataPtr deleter lives here rather than in caching_allocator.cpp so
// that it compiles as one function with the free path (so does
// CachingAllocator::allocate, at the end of this file).
ACCEL_HOT void freeCachedBlock(void* context) noexcept {
  auto* block = static_cast<Block*>(context);
  block->owner->free(block);
}

BlockPool& DeviceCache::poolFor(StreamId stream, std::size_t rounded) {
  const bool small = isSmallSize(rounded);
  if (PrivatePool* pool = private_pools_.allocatingTo(stream))
    return small ? pool->small : pool->large;
  if (!small) return large_;
  return isUniformSize(rounded) ? uniform_ : small_;
}

Block* DeviceCache::findFree(BlockPool& pool, StreamId stream, std::size_t rounded) {
  Block* found = pool.bestFit(stream, rounded);
  // The smallest fitting block decides: every other one is larger, so if this
  // one may not serve (oversize rules) none may.
  if (found == nullptr || !mayServe(found->size, rounded, settings_.max_split_size))
    return nullptr;
  return found;
}

Block* DeviceCache::takeFree(BlockPool& pool, Block* free_block, std::size_t rounded,
                             std::size_t requested) {
  if (!shouldSplit(free_block->size, rounded, pool.small, settings_.max_split_size,
                   free_block->segment->expandable)) {
    pool.erase(free_block);
    adjustInactiveSplit(free_block, -1);
    markAllocated(free_block, requested);
    return free_block;
  }
  // Split in place: the free block stays in the pool and becomes the rest
  // (reshaped); a new block takes the front. Same layout as splitAndMark.
  const std::size_t free_size = free_block->size;
  // Free, so it counts as an inactive split when it has a neighbour.
  const bool was_split = free_block->prev != nullptr || free_block->next != nullptr;
  Block* block =
      makeBlock(free_block->ptr, rounded, free_block->stream, pool, free_block->segment);
  block->prev = free_block->prev;
  block->next = free_block;
  if (block->prev != nullptr) {
    block->prev->next = block;
  } else {
    block->segment->head = block;
  }
  free_block->prev = block;
  pool.reshape(free_block, free_block->ptr + rounded, free_size - rounded);
  if (&pool == &large_ && !block->segment->expandable) {
    // Freed before large_ changes again, it is parked (parked_block.h).
    last_cut_ = block;
    last_cut_changes_ = pool.changes();
  }
  // The rest is split now (the block before it): it replaces the free block
  // in the inactive-split figures, or joins them.
  if (was_split) {
    block_stats_.splitReplaced(pool.small, sized(free_size), 1,
                               sized(free_size - rounded));
  } else {
    block_stats_.splitFree(pool.small, sized(free_size - rounded));
  }
  markAllocated(block, requested);
  return block;
}

void DeviceCache::splitAndMark(Block* block, std::size_t rounded, std::size_t requested) {
  BlockPool& pool = *block->pool;
  adjustInactiveSplit(block, -1);
  if (shouldSplit(block->size, rounded, pool.small, settings_.max_split_size,
                  block->segment->expandable)) {
    Block* rest = makeBlock(block->ptr + rounded, block->size - rounded, block->stream,
                            pool, block->segment);
    rest->prev = block;
    rest->next = block->next;
    if (rest->next != nullptr) rest->next->prev = rest;
    block->next = rest;
    block->size = rounded;
    adjustInactiveSplit(rest, +1);
    pool.insert(rest);
  }
  markAllocated(block, requested);
}

void DeviceCache::markAllocated(Block* block, std::size_t requested) {
  markAllocated(block, requested, block->pool->small);
}

void DeviceCache::markAllocated(Block* block, std::size_t requested, bool small) {
  block->allocated = true;
  block->requested = requested;
  countAllocation(small, block->size, requested);
  if (settings_.max_split_size > 0 && block->size >= settings_.max_split_size) {
    stats_.oversize_allocations.add(1);
  }
  if (history_.recording()) {
    if (history_.capturesStacks())
      block->setStack(captureStack(3, history_.nativeStacks(), history_.takeHostStack()));
    history_.record(Action::Alloc, block, reinterpret_cast<std::uintptr_t>(block->ptr),
                    block->size, block->stream);
  }
}

// ---- freeing ----

// Like allocate, a small fast path: a block that no other stream used, from
// a default pool, goes to this thread's cache when that has room, else, while
// nothing rare is on, to the device's reuse list when that list is free or
// holds its size and has room; anything else is freeSlow (with the lock
// held). A thread's first free of such a block on a device makes its
// cache. A block of a pool that does not hold (large_, a private pool's)
// goes to the device's lock at once: no thread cache would take it.
// Everything but the thread cache's hold is a tail call, so the hold pays
// no frame or register saves.
void DeviceCache::free(Block* block) noexcept {
  if (!block->pool->holds) [[unlikely]]
    return freeUnheld(block);
  ThreadCache* cache = findThreadCache(this);
  if (cache != nullptr && holdLocal(*cache, block)) [[likely]]
    return;
  freeUncached(block, cache);
}

[[gnu::noinline]] void DeviceCache::freeUncached(Block* block,
                                                 ThreadCache* cache) noexcept {
  if (cache == nullptr && caches_enabled_.load(std::memory_order_relaxed)) {
    cache = attachThreadCache(*this);
    if (cache != nullptr && holdLocal(*cache, block)) return;
  }
  freeLocked(block);
}

ACCEL_HOT [[gnu::noinline]] void DeviceCache::freeLocked(Block* block) noexcept {
  BiasedMutex::Guard lock(mutex_);
  if (plain_ && !block->has_stream_uses &&
      block->uses.load(std::memory_order_relaxed) == 0) [[likely]] {
    const std::size_t index = ReuseLists::indexOf(block->stream, block->size);
    if (reuse_.hasRoomFor(index, block)) [[likely]] {
      block_stats_.freed(/*small=*/true, sized(block->size), sized(block->requested),
                         false);
      if (tracing_) [[unlikely]]
        history_.traceFree(block);
      reuse_.push(index, block);
      return;
    }
  }
  freeSlow(block);
}

ACCEL_HOT [[gnu::noinline]] void DeviceCache::freeUnheld(Block* block) noexcept {
  BiasedMutex::Guard lock(mutex_);
  if (block == last_cut_ && park(block)) return;  // parked_block.h
  freeSlow(block);
}

ACCEL_HOT [[gnu::noinline]] void DeviceCache::freeSlow(Block* block) noexcept {
  if (block->uses.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    block->freed_while_used = true;  // the last BlockUse frees it (releaseUse)
    return;
  }
  // In a fork child, a block of the parent's memory leaks (device_fork.cpp):
  // freed by its user, active for good, as if waiting for an event.
  const bool leak = fork_generation_ != 0 && inherited(block->segment);
  const bool pending = leak || (block->has_stream_uses && source_.hasEvents());
  block_stats_.freed(block->pool->small, sized(block->size), sized(block->requested),
                     pending);
  if (settings_.max_split_size > 0 && block->size >= settings_.max_split_size) {
    stats_.oversize_allocations.add(-1);
  }
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  // One clock read for both events of an immediate free.
  std::int64_t now = 0;
  if (history_.recording()) {
    now = history_.now();
    history_.record(Action::FreeRequested, block, address, block->size, block->stream, 0,
                    now);
  }
  block->pending_free = true;
  if (leak) [[unlikely]]
    return;
  if (pending) {
    recordFreeEvents(block);
    return;
  }
  block->clearStreamUses();
  if (block->pool->holds && hold(block, now)) return;
  returnBlock(block, now);
}

void DeviceCache::returnBlock(Block* block, std::int64_t stamp,
                              bool record_completion) noexcept {
  BlockPool& pool = *block->pool;
  if (parked_ != nullptr && &pool == &large_)
    settleParked();  // first, as its free did (parked_block.h)
  const std::size_t size = block->size;
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  const StreamId stream = block->stream;
  block->allocated = false;
  block->pending_free = false;
  block->requested = 0;
  block->resetStack();
  // Merge with free neighbours. A neighbour already in the free set absorbs
  // the others and is reshaped in place (see BlockPool::reshape), so the
  // common free — next to the free rest of its segment — neither allocates
  // nor rebalances.
  Block* prev = block->prev;
  Block* next = block->next;
  const bool merge_prev = prev != nullptr && !prev->allocated;
  const bool merge_next = next != nullptr && !next->allocated;
  if (!merge_prev && !merge_next) {
    pool.insert(block);
    adjustInactiveSplit(block, +1);
  } else {
    // The free neighbours it merges with are inactive splits (they have this
    // block beside them); the merged block stays one unless it is now its
    // whole segment.
    Block* merged = nullptr;
    std::size_t gone_size = 0;
    if (merge_prev) {
      gone_size = prev->size;
      std::size_t merged_size = prev->size + block->size;
      prev->next = next;
      if (merge_next) {
        gone_size += next->size;
        pool.erase(next);
        merged_size += next->size;
        prev->next = next->next;
        recycle(next);
      }
      if (prev->next != nullptr) prev->next->prev = prev;
      pool.reshape(prev, prev->ptr, merged_size);
      merged = prev;
    } else {
      gone_size = next->size;
      next->prev = prev;
      if (prev != nullptr) {
        prev->next = next;
      } else {
        next->segment->head = next;
      }
      pool.reshape(next, block->ptr, block->size + next->size);
      merged = next;
    }
    recycle(block);
    const std::int64_t gone = merge_prev && merge_next ? 2 : 1;
    if (merged->prev != nullptr || merged->next != nullptr) {
      block_stats_.splitReplaced(pool.small, sized(gone_size), gone, sized(merged->size));
    } else {
      block_stats_.splitGone(pool.small, sized(gone_size), gone);
    }
  }
  if (record_completion && history_.recording()) {
    history_.record(Action::FreeCompleted, nullptr, address, size, stream, 0, stamp);
  }
  if (pool.owner != nullptr && pool.owner->users == 0)
    maybeReleasePrivatePool(pool.owner);
}

// ---- reuse lists ----

bool DeviceCache::hold(Block* block, std::int64_t stamp) noexcept {
  const std::size_t index = ReuseLists::indexOf(block->stream, block->size);
  const ReuseList& list = reuse_.list(index);
  if (list.count > 0 && (list.stream != block->stream || list.size != block->size)) {
    // Another size or stream had the list: it gives way.
    reuse_.releaseList(index, [this](Block* held) { returnBlock(held, 0, false); });
  }
  if (!reuse_.hasRoomFor(index, block)) return false;
  block->pending_free = false;
  reuse_.push(index, block);
  if (history_.recording()) {
    history_.record(Action::FreeCompleted, nullptr,
                    reinterpret_cast<std::uintptr_t>(block->ptr), block->size,
                    block->stream, 0, stamp);
  }
  return true;
}

// A miss of small_'s returns (releaseHeld): here, so that allocateSlow's
// flatten inlines them with returnBlock and the pool updates (out of line,
// calls were a fifth of the training trace's replay). Only the small and
// uniform pools' blocks are ever held (hold, holdLocal), so a large miss
// has nothing to return; a uniform pool's stay held (they cannot merge into
// small_'s blocks), and so do other streams' (best fit searches the miss's
// stream's blocks only, and a block merges only within its segment, which
// is its stream's): requests rotating over streams keep their blocks.
void DeviceCache::releaseHeld(StreamId stream) noexcept {
  reuse_.releaseMixed(stream, [this](Block* held) { returnBlock(held, 0, false); });
  if (ThreadCache* mine = findThreadCache(this))
    drainThreadCacheButUniform(*mine, stream);
}

void DeviceCache::releaseHeldWithUniform() noexcept {
  reuse_.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  if (ThreadCache* mine = findThreadCache(this)) drainThreadCache(*mine);
}

void DeviceCache::drainThreadCache(ThreadCache& cache) noexcept {
  cache.lists.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  cache.quanta.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  cache.held_bytes = 0;
  absorbFigures(cache);
}

void DeviceCache::drainThreadCacheButUniform(ThreadCache& cache,
                                             StreamId stream) noexcept {
  if (cache.lists.mixedEmpty()) return;  // the figures may wait
  std::size_t returned = 0;
  cache.lists.releaseMixed(stream, [&](Block* held) {
    returned += held->size;
    returnBlock(held, 0, false);
  });
  if (returned == 0) return;  // only other streams' blocks: the figures may wait
  cache.held_bytes -= returned;
  absorbFiguresButHeld(cache, cache.lists.count() + cache.quanta.count());
}

void DeviceCache::absorbFigures(ThreadCache& cache) noexcept {
  // Usually empty here (on the training trace, 62 % of misses come with no
  // hit or hold since the last one).
  if (cache.figures.empty()) return;
  block_stats_.absorb(/*small=*/true, cache.figures);
  cache.figures = {};
}

void DeviceCache::absorbFiguresButHeld(ThreadCache& cache, std::int64_t held) noexcept {
  LocalBlockFigures& figures = cache.figures;
  // The held blocks' part stays: their bytes and count, and as much of the
  // requested bytes as they may carry (at most their size; more is never
  // kept than the cache's balance, so the device's figures stay at or above
  // the true ones, LocalBlockFigures).
  LocalBlockFigures kept;
  kept.bytes_out = sized(cache.held_bytes);
  kept.count_out = held;
  kept.requested_out =
      std::min(figures.requested_out - figures.requested_in, kept.bytes_out);
  figures.bytes_out -= kept.bytes_out;
  figures.count_out -= kept.count_out;
  figures.requested_out -= kept.requested_out;
  block_stats_.absorb(/*small=*/true, figures);
  figures = kept;
}

// ---- thread caches: the paths without the device's lock ----

namespace {

// A cache's figures as `block` (of `size` bytes, a constant for the
// quantum's stack) leaves it for a request of `bytes` (takeLocal).
void countTaken(ThreadCache& cache, Block* block, std::size_t size,
                std::size_t bytes) noexcept {
  LocalBlockFigures& figures = cache.figures;
  figures.bytes_in += sized(size);
  figures.count_in += 1;
  figures.requested_in += sized(bytes);
  cache.held_bytes -= size;
  block->requested = bytes;
}

// ... and as a freed `block` of `size` bytes enters it (holdLocal).
void countHeld(ThreadCache& cache, const Block* block, std::size_t size) noexcept {
  LocalBlockFigures& figures = cache.figures;
  figures.bytes_out += sized(size);
  figures.count_out += 1;
  figures.requested_out += sized(block->requested);
  cache.held_bytes += size;
}

// Whether the cache may serve a request of `bytes` (LocalBlockFigures):
// bytes and counts stay covered by what it took, requested bytes may not.
bool coversRequest(const ThreadCache& cache, std::size_t bytes) noexcept {
  return cache.figures.requested_out - cache.figures.requested_in >= sized(bytes);
}

}  // namespace

// The owner's section (thread_cache.h): `inside` is stored, then `keep_out`
// read; only the compiler must keep them in that order, a claimer's
// process-wide barrier orders them on the processor. kNotServing and
// `divisions` are only written while every cache is claimed.
Block* DeviceCache::takeLocal(ThreadCache& cache, std::size_t bytes,
                              StreamId stream) noexcept {
  cache.inside.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Block* block = nullptr;
  if (cache.keep_out.load(std::memory_order_acquire) == 0) [[likely]] {
    if (bytes <= kMinBlockSize && stream == kDefaultStreamId) {
      Block* top = cache.quanta.top();
      if (top != nullptr && coversRequest(cache, bytes)) [[likely]] {
        cache.quanta.pop();
        countTaken(cache, top, kMinBlockSize, bytes);
        block = top;
      }
      cache.inside.store(false, std::memory_order_release);
      return block;
    }
    // A cache holds small-pool blocks only: a larger request is not looked
    // up (nor rounded: a small one does not wrap).
    if (bytes <= kSmallSize) [[likely]] {
      const std::size_t rounded = roundSize(bytes, cache.divisions);
      block = cache.lists.take(stream, rounded);
      if (block != nullptr) [[likely]] {
        if (coversRequest(cache, bytes)) [[likely]] {
          countTaken(cache, block, block->size, bytes);
        } else {
          cache.lists.putBack(ReuseLists::indexOf(stream, rounded), block);
          block = nullptr;
        }
      }
    }
  }
  cache.inside.store(false, std::memory_order_release);
  return block;
}

void DeviceCache::countAllocation(bool small, std::size_t size,
                                  std::size_t requested) noexcept {
  // One pass over the rooms: below every peak, the allocation is counted.
  if (block_stats_.tryAllocated(small, sized(size), sized(requested))) [[likely]]
    return;
  if (thread_caches_ != nullptr) {
    // A peak may rise: it must be measured from every thread's figures.
    ClaimedThreadCaches claimed(*this, /*drain_blocks=*/false);
  }
  block_stats_.allocated(small, sized(size), sized(requested));
}

bool DeviceCache::holdLocal(ThreadCache& cache, Block* block) noexcept {
  if (block->has_stream_uses || block->uses.load(std::memory_order_acquire) != 0) {
    return false;  // freeSlow (a backend's use may defer the free)
  }
  cache.inside.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  bool held = false;
  if (cache.keep_out.load(std::memory_order_acquire) == 0 &&
      cache.held_bytes + block->size <= kThreadCacheMaxBytes) [[likely]] {
    if (block->size == kMinBlockSize && block->stream == kDefaultStreamId) {
      // A held pool's block of the quantum is a uniform pool's.
      if (cache.quanta.hasRoom()) [[likely]] {
        countHeld(cache, block, kMinBlockSize);
        cache.quanta.push(block);
        held = true;
      }
      cache.inside.store(false, std::memory_order_release);
      return held;
    }
    const std::size_t index = ReuseLists::indexOf(block->stream, block->size);
    if (cache.lists.hasRoomFor(index, block)) [[likely]] {
      countHeld(cache, block, block->size);
      cache.lists.push(index, block);
      held = true;
    }
  }
  cache.inside.store(false, std::memory_order_release);
  return held;
}

// ---- block objects, figures ----

Block* DeviceCache::makeBlock(std::byte* ptr, std::size_t size, StreamId stream,
                              BlockPool& pool, Segment* segment) {
  Block* block = spare_blocks_;
  if (block != nullptr) {
    spare_blocks_ = block->next;
  } else {
    block = new Block();
  }
  block->owner = this;
  block->ptr = ptr;
  block->size = size;
  block->requested = 0;
  block->stream = stream;
  block->pool = &pool;
  block->segment = segment;
  block->prev = nullptr;
  block->next = nullptr;
  block->allocated = false;
  block->pending_free = false;
  block->event_count = 0;
  block->uses.store(0, std::memory_order_relaxed);
  block->freed_while_used = false;
  block->in_free_set = {};
  block->free_prev = nullptr;
  block->free_next = nullptr;
  return block;
}

void DeviceCache::recycle(Block* block) noexcept {
  if (block == last_cut_) last_cut_ = nullptr;
  // The vector keeps its capacity; makeBlock sets the other fields.
  block->clearStreamUses();
  block->resetStack();
  block->next = spare_blocks_;
  spare_blocks_ = block;
}

void DeviceCache::adjustInactiveSplit(const Block* block, int sign) noexcept {
  if (block->allocated || (block->prev == nullptr && block->next == nullptr)) return;
  if (sign > 0) {
    block_stats_.splitFree(block->pool->small, sized(block->size));
  } else {
    block_stats_.splitGone(block->pool->small, sized(block->size));
  }
}

}  // namespace accel::memory::detail

namespace accel::memory {

// Here rather than in caching_allocator.cpp: it compiles as one function
// with DeviceCache's thread-cache path and its large-pool path
// (allocateLarge). Everything else is one call to allocateUncommon, which
// checks again. (GCC 12 makes no tail call of a function that returns a
// DataPtr in memory, so the register saves stay on every path.)
ACCEL_HOT DataPtr CachingAllocator::allocate(DeviceIndex index, std::size_t bytes,
                                             Stream stream) {
  const Device where = Device::unchecked(type_, index);
  if (index >= 0 && index < static_cast<int>(devices_.size()) && stream.device == where)
      [[likely]] {
    detail::DeviceCache& cache = *devices_[static_cast<std::size_t>(index)];
    // 0 < bytes <= kSmallSize in one comparison: a thread cache holds
    // small-pool blocks only, so a large request goes to the lock at once.
    if (bytes - 1 < kSmallSize) [[likely]] {
      if (detail::Block* block = cache.allocateFromThreadCache(bytes, stream.id))
          [[likely]]
        return DataPtr(block->ptr, block, &detail::freeCachedBlock, where);
    } else if (bytes != 0) {
      detail::Block* block = cache.allocateLarge(bytes, stream.id);
      return DataPtr(block->ptr, block, &detail::freeCachedBlock, where);
    }
  }
  return detail::DeviceCache::allocateUncommon(*this, index, bytes, stream);
}

[[gnu::noinline]] DataPtr detail::DeviceCache::allocateUncommon(
    CachingAllocator& allocator, DeviceIndex index, std::size_t bytes, Stream stream) {
  if (index < 0 || index >= static_cast<int>(allocator.devices_.size())) [[unlikely]]
    allocator.throwBadDevice(index);
  DeviceCache& cache = *allocator.devices_[static_cast<std::size_t>(index)];
  const Device where = Device::unchecked(allocator.type_, index);
  if (stream.device != where) [[unlikely]]
    CachingAllocator::throwForeignStream(stream, where);
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, where);
  Block* block = cache.allocateLocked(bytes, stream.id);
  return DataPtr(block->ptr, block, &freeCachedBlock, where);
}

}  // namespace accel::memory
