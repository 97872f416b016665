// DeviceCache: construction and destruction, and segments — asking the
// device for memory (whole segments, or pages mapped into an expandable
// segment's address range, expandable_segments.h; allocateFresh, when no
// cached block fits) and giving it back (emptyCache, the retries before
// OutOfMemory, garbage collection, private pools whose users are gone).
#include <algorithm>
#include <vector>

#include "accel/error.h"
#include "accel/memory/size_rules.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

DeviceCache::DeviceCache(CachingAllocator& allocator, DeviceIndex index,
                         AllocatorSettings settings, const OutOfMemorySink& oom_sink)
    : allocator_(allocator),
      source_(allocator.source()),
      index_(index),
      settings_(settings),
      expandable_(source_, index),
      pending_(source_, Device::unchecked(allocator.deviceType(), index)),
      oom_sink_(oom_sink) {
  stats_.max_split_size = sized(settings_.max_split_size);
  mutex_.allowBias(settings_.biased_lock);
  updatePlain();
  updateLocalOk();
  linkLive();
}

DeviceCache::~DeviceCache() {
  unlinkLive();
  // Only reached when the allocator itself is destroyed (tests, tools): give
  // the device back what it lent; blocks still handed out are the caller's
  // bug and are not touched. Blocks held by thread caches are deleted with
  // their segments; the caches no longer name this device.
  detachThreadCaches(thread_caches_);
  // Events first: deciding whether one is inherited reads its block, which
  // the segments' loop deletes.
  pending_.releaseAll([this](const Block* block) { return !inherited(block->segment); });
  for (auto& [base, segment] : segments_) {
    if (inherited(segment.get())) {
      // The parent's memory (device_fork.cpp): not this process's to give back.
    } else if (segment->expandable) {
      expandable_.giveBack(*segment);
    } else {
      source_.freeSegment(index_, segment->base, segment->size);
    }
    for (Block* block = segment->head; block != nullptr;) {
      Block* next = block->next;
      delete block;
      block = next;
    }
  }
  while (spare_blocks_ != nullptr) {
    Block* next = spare_blocks_->next;
    delete spare_blocks_;
    spare_blocks_ = next;
  }
}

// allocate() when no cached block fits (allocateSlow, device_cache.cpp).
[[gnu::noinline, gnu::cold]] Block* DeviceCache::allocateFresh(BiasedMutex::Guard& lock,
                                                               BlockPool& pool,
                                                               std::size_t rounded,
                                                               std::size_t bytes,
                                                               StreamId stream) {
  settleParked();  // segments are looked at (parked_block.h)
  if (settings_.garbage_collection_threshold > 0.0) garbageCollect();
  Block* block = newSegment(pool, stream, rounded);
  if (block == nullptr) block = handOff(pool, stream, rounded);
  if (block == nullptr) {
    ++stats_.num_alloc_retries;
    releaseAllHeld();  // every thread's cached blocks may merge now
    if (settings_.max_split_size > 0 && releaseCached(true) > 0) {
      block = newSegment(pool, stream, rounded);
    }
    if (block == nullptr) {
      synchronizeEvents();
      releaseCached(false);
      if (Block* found = findFree(pool, stream, rounded))
        return takeFree(pool, found, rounded, bytes);
      block = newSegment(pool, stream, rounded);
    }
  }
  if (block == nullptr) raiseOutOfMemory(lock, rounded, stream);
  splitAndMark(block, rounded, bytes);
  return block;
}

using Action = MemoryTraceEntry::Action;

bool DeviceCache::fitsLimit(std::size_t bytes) const noexcept {
  return !cap_.capped ||
         sized(bytes) + stats_.reserved_bytes.current <= sized(cap_.bytes);
}

Segment* DeviceCache::addSegment(void* base, StreamId stream, BlockPool& pool) {
  auto owned = std::make_unique<Segment>();
  owned->base = static_cast<std::byte*>(base);
  owned->stream = stream;
  owned->pool = &pool;
  Segment* segment = owned.get();
  segment->fork_generation = fork_generation_;
  const bool added = segments_.emplace(segment->base, std::move(owned)).second;
  // Two live segments at one address: the source handed out memory it had
  // already lent. Refuse it rather than return a segment that is gone.
  ACCEL_CHECK(added, DeviceError, "the segment source of ",
              Device::unchecked(allocator_.deviceType(), index_), " returned address ",
              base, " for a new segment while a segment at that address is live");
  return segment;
}

Block* DeviceCache::newSegment(BlockPool& pool, StreamId stream, std::size_t rounded) {
  if (settings_.expandable_segments && !pool.small && pool.owner == nullptr &&
      source_.pageSize() > 0) {
    if (Block* block = growExpandable(pool, stream, rounded)) return block;
  }
  const std::size_t size = segmentSize(rounded);
  if (!fitsLimit(size)) return nullptr;
  void* memory = source_.allocateSegment(index_, size);
  if (memory == nullptr) return nullptr;
  Segment* segment = addSegment(memory, stream, pool);
  segment->size = size;
  Block* block = makeBlock(segment->base, size, stream, pool, segment);
  segment->head = block;
  stats_.reserved_bytes.add(pool.small, sized(size));
  stats_.segments.add(pool.small, 1);
  ++stats_.num_device_alloc;
  if (settings_.max_split_size > 0 && size >= settings_.max_split_size) {
    stats_.oversize_segments.add(1);
  }
  history_.record(Action::SegmentAlloc, nullptr, reinterpret_cast<std::uintptr_t>(memory),
                  size, stream);
  return block;
}

Block* DeviceCache::growExpandable(BlockPool& pool, StreamId stream,
                                   std::size_t rounded) {
  Segment* segment = expandable_.of(stream);
  if (segment == nullptr) {
    // A first growth past the cap (a fraction of 0 caps at 0 bytes) is
    // refused before any address space is reserved: a reservation sized
    // for the whole device would only be released again at once.
    if (!fitsLimit(roundUpTo(rounded, expandable_.step()))) return nullptr;
    std::size_t range = 0;
    void* base = expandable_.reserveRange(rounded, cap_, range);
    if (base == nullptr) return nullptr;
    try {
      segment = addSegment(base, stream, pool);
    } catch (...) {
      expandable_.abandonRange(base, range);
      throw;
    }
    expandable_.adopt(*segment, range);
    stats_.segments.add(false, 1);
  }
  Block* tail = ExpandableSegments::tailOf(*segment);
  const std::size_t tail_free = (tail != nullptr && !tail->allocated) ? tail->size : 0;
  const std::size_t grow = expandable_.growthFor(rounded, tail_free);
  std::byte* at = segment->base + segment->size;
  if (!fitsLimit(grow) || !expandable_.map(*segment, grow)) {
    // A range with nothing mapped is given back at once rather than kept
    // (empty, counted as a segment) until a later growth.
    if (segment->head == nullptr) releaseExpandableRange(segment);
    return nullptr;
  }
  stats_.reserved_bytes.add(false, sized(grow));
  ++stats_.num_device_alloc;
  history_.record(Action::SegmentMap, nullptr, reinterpret_cast<std::uintptr_t>(at), grow,
                  stream);
  Block* block = nullptr;
  if (tail_free > 0) {
    adjustInactiveSplit(tail, -1);  // counted again below, at its new size
    pool.erase(tail);
    tail->size += grow;
    block = tail;
  } else {
    block = makeBlock(at, grow, stream, pool, segment);
    block->prev = tail;
    if (tail != nullptr) {
      tail->next = block;
    } else {
      segment->head = block;
    }
  }
  // The grown block is free, so it counts as an inactive split like any free
  // block the caller takes (splitAndMark uncounts it).
  adjustInactiveSplit(block, +1);
  if (block->size < rounded) {  // a tail too small even after growing: keep it
    pool.insert(block);
    return nullptr;
  }
  return block;
}

void DeviceCache::releaseSegment(Block* block) noexcept {
  Segment* segment = block->segment;
  BlockPool& pool = *block->pool;
  pool.erase(block);
  const std::size_t size = segment->size;
  source_.freeSegment(index_, segment->base, size);
  stats_.reserved_bytes.add(pool.small, -sized(size));
  stats_.segments.add(pool.small, -1);
  ++stats_.num_device_free;
  if (settings_.max_split_size > 0 && size >= settings_.max_split_size) {
    stats_.oversize_segments.add(-1);
  }
  history_.record(Action::SegmentFree, nullptr,
                  reinterpret_cast<std::uintptr_t>(segment->base), size, segment->stream);
  recycle(block);
  segments_.erase(segment->base);
}

void DeviceCache::shrinkExpandable(Segment* segment) noexcept {
  Block* tail = ExpandableSegments::tailOf(*segment);
  if (tail == nullptr || tail->allocated) return;
  const std::size_t unmap = expandable_.unmappable(*segment, *tail);
  if (unmap == 0) return;
  BlockPool& pool = *tail->pool;
  adjustInactiveSplit(tail, -1);
  pool.erase(tail);
  expandable_.unmap(*segment, unmap);
  tail->size -= unmap;
  stats_.reserved_bytes.add(false, -sized(unmap));
  ++stats_.num_device_free;
  history_.record(Action::SegmentUnmap, nullptr,
                  reinterpret_cast<std::uintptr_t>(segment->base + segment->size), unmap,
                  segment->stream);
  if (tail->size > 0) {
    adjustInactiveSplit(tail, +1);
    pool.insert(tail);
    return;
  }
  if (tail->prev != nullptr) {
    // The block before a free tail is allocated (free neighbours merge), so
    // it counts in no inactive-split figure whether or not it is split.
    tail->prev->next = nullptr;
    recycle(tail);
    return;
  }
  // Nothing is mapped any more: give the address range back too.
  recycle(tail);
  segment->head = nullptr;
  releaseExpandableRange(segment);
}

void DeviceCache::releaseExpandableRange(Segment* segment) noexcept {
  expandable_.releaseRange(*segment);
  stats_.segments.add(false, -1);
  segments_.erase(segment->base);  // destroys *segment
}

std::size_t DeviceCache::releaseCached(bool oversize_only) noexcept {
  std::size_t released = 0;
  std::vector<Block*> victims;
  std::vector<Segment*> expandable;
  for (auto& [base, segment] : segments_) {
    PrivatePool* owner = segment->pool->owner;
    if (owner != nullptr && owner->users > 0) continue;
    if (inherited(segment.get())) continue;  // a fork child's (device_fork.cpp)
    if (segment->expandable) {
      if (!oversize_only) expandable.push_back(segment.get());
      continue;
    }
    Block* head = segment->head;
    if (!isFreeWholeSegment(head)) continue;
    if (oversize_only && head->size < settings_.max_split_size) continue;
    victims.push_back(head);
  }
  for (Block* victim : victims) {
    released += victim->size;
    releaseSegment(victim);
  }
  for (Segment* segment : expandable) {
    const std::size_t before = segment->size;
    shrinkExpandable(segment);
    released += before;  // an upper bound is enough for the caller's "> 0"
  }
  return released;
}

void DeviceCache::emptyCache() {
  BiasedMutex::Guard lock(mutex_);
  if (set_aside_pending_) setAsideInherited();
  releaseAllHeld();
  synchronizeEvents();
  releaseCached(false);
}

void DeviceCache::garbageCollect() noexcept {
  const std::size_t capacity =
      cap_.capped ? cap_.bytes : source_.memoryInfo(index_).total_bytes;
  if (capacity == 0) return;
  const auto threshold = static_cast<std::int64_t>(
      settings_.garbage_collection_threshold * static_cast<double>(capacity));
  if (stats_.reserved_bytes.current <= threshold) return;
  // Largest free segments first: they bring the reservation down fastest.
  std::vector<Block*> victims;
  for (auto& [base, segment] : segments_) {
    if (segment->pool->owner == nullptr && !segment->expandable &&
        !inherited(segment.get()) && isFreeWholeSegment(segment->head)) {
      victims.push_back(segment->head);
    }
  }
  std::sort(victims.begin(), victims.end(),
            [](const Block* a, const Block* b) { return a->size > b->size; });
  for (Block* victim : victims) {
    if (stats_.reserved_bytes.current <= threshold) break;
    releaseSegment(victim);
  }
}

[[gnu::noinline, gnu::cold]] void DeviceCache::maybeReleasePrivatePool(
    PrivatePool* pool) noexcept {
  std::vector<Block*> victims;
  bool in_use = false;
  for (auto& [base, segment] : segments_) {
    if (segment->pool->owner != pool) continue;
    if (isFreeWholeSegment(segment->head) && !inherited(segment.get())) {
      victims.push_back(segment->head);
    } else {
      in_use = true;
    }
  }
  for (Block* victim : victims) releaseSegment(victim);
  if (!in_use) private_pools_.erase(pool);
}

}  // namespace accel::memory::detail
