#include "memory/device_cache.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>

#include "accel/error.h"
#include "accel/memory/size_rules.h"

namespace accel::memory::detail {
namespace {

using Action = MemoryTraceEntry::Action;

constexpr std::int64_t sized(std::size_t bytes) noexcept {
  return static_cast<std::int64_t>(bytes);
}

std::string formatBytes(std::size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%zu B", bytes);
  } else {
    std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  }
  return text;
}

bool isFreeWholeSegment(const Block* block) noexcept {
  return !block->allocated && block->prev == nullptr && block->next == nullptr &&
         !block->segment->expandable;
}

}  // namespace

// ---- the free sets ----

void BlockPool::insert(Block* block) {
  if (spare_nodes_.empty()) {
    block->in_free_set = blocks.insert(block).first;
    return;
  }
  FreeSet::node_type node = std::move(spare_nodes_.back());
  spare_nodes_.pop_back();
  node.value() = block;
  block->in_free_set = blocks.insert(std::move(node)).position;
}

void BlockPool::erase(Block* block) noexcept {
  keepNode(blocks.extract(block->in_free_set));
  block->in_free_set = {};
}

void BlockPool::keepNode(FreeSet::node_type node) noexcept {
  try {
    spare_nodes_.push_back(std::move(node));
  } catch (...) {
    // No room to keep it: the node is freed instead.
  }
}

void BlockPool::reshape(Block* block, std::byte* ptr, std::size_t size) noexcept {
  // The set orders by what the pointers point at, so changing the block
  // changes its key. It stays where it is when it still ranks between its
  // neighbours (the usual case: the rest of a split, a merge); otherwise its
  // node is unlinked (no comparisons) and relinked at the new rank. Sizes
  // only change with addresses inside one stream's blocks, so a block that
  // grew can only have passed later ones and one that shrank earlier ones.
  const FreeSet::iterator at = block->in_free_set;
  const bool grew = size > block->size;
  block->ptr = ptr;
  block->size = size;
  const BlockOrder before;
  if (grew) {
    const auto next = std::next(at);
    if (next == blocks.end() || before(block, *next)) return;
  } else {
    if (at == blocks.begin() || before(*std::prev(at), block)) return;
  }
  block->in_free_set = blocks.insert(blocks.extract(at)).position;
}

DeviceCache::DeviceCache(CachingAllocator& allocator, DeviceIndex index,
                         AllocatorSettings settings)
    : allocator_(allocator),
      source_(allocator.source()),
      index_(index),
      settings_(settings) {
  stats_.max_split_size = sized(settings_.max_split_size);
  updatePlain();
}

DeviceCache::~DeviceCache() {
  // Only reached when the allocator itself is destroyed (tests, tools): give
  // the device back what it lent; blocks still handed out are the caller's
  // bug and are not touched.
  for (auto& [base, segment] : segments_) {
    if (segment->expandable) {
      if (segment->size > 0) source_.unmapPages(index_, segment->base, segment->size);
      source_.releaseAddressRange(index_, segment->base, segment->reserved);
    } else {
      source_.freeSegment(index_, segment->base, segment->size);
    }
    for (Block* block = segment->head; block != nullptr;) {
      Block* next = block->next;
      delete block;
      block = next;
    }
  }
  for (auto& [event, block] : pending_events_) source_.releaseEvent(event);
  while (spare_blocks_ != nullptr) {
    Block* next = spare_blocks_->next;
    delete spare_blocks_;
    spare_blocks_ = next;
  }
}

// ---- allocation ----

// The hot paths (allocate from the cache, free into it) are compiled as one
// function each, their helpers (history recording included) inlined
// (flatten); everything rare is kept out of line (ACCEL_COLD) so that they
// stay small.
#define ACCEL_HOT [[gnu::flatten]]
#define ACCEL_COLD [[gnu::noinline, gnu::cold]]

// The fast path is a small function of its own, so that it does not pay
// the frame and register saves of the whole allocator: a held block of the
// rounded size on this stream while nothing rare is on (plain_: a default
// pool, no oversize count, no stack to capture; tracing_ adds the trace
// entries). Anything else is allocateSlow, with the lock held.
Block* DeviceCache::allocate(std::size_t bytes, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  if (plain_) [[likely]] {
    const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
    if (rounded >= bytes) [[likely]] {  // else it overflowed: allocateSlow throws
      if (Block* block = takeHeld(stream, rounded)) {
        block->requested = bytes;
        block_stats_.allocated(block->pool == &small_, sized(block->size), sized(bytes));
        if (tracing_) [[unlikely]]
          traceAllocation(block);
        return block;
      }
    }
  }
  return allocateSlow(lock, bytes, stream);
}

ACCEL_HOT [[gnu::noinline]] Block* DeviceCache::allocateSlow(BiasedMutex::Guard& lock,
                                                             std::size_t bytes,
                                                             StreamId stream) {
  const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
  if (rounded < bytes) [[unlikely]]
    throwSizeOverflow(bytes);
  if (!pending_events_.empty()) processEvents();
  BlockPool& pool = poolFor(stream, rounded);
  if (reuse_used_ != 0) {
    if (pool.owner == nullptr) {
      if (Block* block = takeHeld(stream, rounded)) {
        markAllocated(block, bytes);
        return block;
      }
    }
    releaseHeld();
  }
  if (auto found = findFree(pool, stream, rounded); found != pool.blocks.end())
    return takeFree(pool, *found, rounded, bytes);
  return allocateFresh(lock, pool, rounded, bytes, stream);
}

// The DataPtr deleter lives here rather than in caching_allocator.cpp so
// that it compiles as one function with the free path (so does
// CachingAllocator::allocate, at the end of this file).
ACCEL_HOT void freeCachedBlock(void* context) noexcept {
  auto* block = static_cast<Block*>(context);
  block->owner->free(block);
}

ACCEL_COLD void DeviceCache::throwSizeOverflow(std::size_t bytes) {
  throw OutOfMemory(accel::detail::concat("cannot allocate ", bytes,
                                          " bytes: the size overflows when rounded"));
}

ACCEL_COLD Block* DeviceCache::allocateFresh(BiasedMutex::Guard& lock, BlockPool& pool,
                                             std::size_t rounded, std::size_t bytes,
                                             StreamId stream) {
  if (settings_.garbage_collection_threshold > 0.0) garbageCollect();
  Block* block = newSegment(pool, stream, rounded);
  if (block == nullptr) block = handOff(pool, stream, rounded);
  if (block == nullptr) {
    ++stats_.num_alloc_retries;
    if (settings_.max_split_size > 0 && releaseCached(true) > 0) {
      block = newSegment(pool, stream, rounded);
    }
    if (block == nullptr) {
      synchronizeEvents();
      releaseCached(false);
      if (auto found = findFree(pool, stream, rounded); found != pool.blocks.end())
        return takeFree(pool, *found, rounded, bytes);
      block = newSegment(pool, stream, rounded);
    }
  }
  if (block == nullptr) raiseOutOfMemory(lock, rounded, stream);
  splitAndMark(block, rounded, bytes);
  return block;
}

void DeviceCache::failAsOutOfMemory(std::size_t bytes, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  const std::size_t rounded = roundSize(bytes, settings_.roundup_power2_divisions);
  // The retry a real shortage gets: the cache is given back, then the device
  // (which refuses this request) is asked again.
  ++stats_.num_alloc_retries;
  if (settings_.max_split_size > 0) (void)releaseCached(true);
  synchronizeEvents();
  (void)releaseCached(false);
  raiseOutOfMemory(lock, std::max(rounded, bytes), stream);
}

void DeviceCache::raiseOutOfMemory(BiasedMutex::Guard& lock, std::size_t rounded,
                                   StreamId stream) {
  ++stats_.num_ooms;
  const OutOfMemoryEvent facts = outOfMemoryFacts(rounded, stream);
  record(Action::Oom, nullptr, 0, rounded, stream, facts.device_free_bytes);
  const std::string message = outOfMemoryMessage(facts);
  lock.unlock();
  allocator_.notifyOutOfMemory(facts);
  throw OutOfMemory(message);
}

BlockPool& DeviceCache::poolFor(StreamId stream, std::size_t rounded) {
  const bool small = isSmallSize(rounded);
  for (const auto& [capturing, pool] : allocating_to_pool_) {
    if (capturing == stream) return small ? pool->small : pool->large;
  }
  return small ? small_ : large_;
}

FreeSet::iterator DeviceCache::findFree(BlockPool& pool, StreamId stream,
                                        std::size_t rounded) {
  auto found = pool.blocks.lower_bound(FreeKey{stream, rounded});
  if (found == pool.blocks.end() || (*found)->stream != stream) return pool.blocks.end();
  // The smallest fitting block decides: every later one is larger, so if this
  // one may not serve (oversize rules) none may.
  if (!mayServe((*found)->size, rounded, settings_.max_split_size))
    return pool.blocks.end();
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
  // Split in place: the free block keeps its place in the set and becomes
  // the rest; a new block takes the front. Same layout as splitAndMark.
  Block* block =
      makeBlock(free_block->ptr, rounded, free_block->stream, pool, free_block->segment);
  adjustInactiveSplit(free_block, -1);
  block->prev = free_block->prev;
  block->next = free_block;
  if (block->prev != nullptr) {
    block->prev->next = block;
  } else {
    block->segment->head = block;
  }
  free_block->prev = block;
  pool.reshape(free_block, free_block->ptr + rounded, free_block->size - rounded);
  adjustInactiveSplit(free_block, +1);
  markAllocated(block, requested);
  return block;
}

bool DeviceCache::fitsLimit(std::size_t bytes) const noexcept {
  return limit_ == 0 || sized(bytes) + stats_.reserved_bytes.current <= sized(limit_);
}

std::size_t DeviceCache::expandableStep() const noexcept {
  return std::max(source_.pageSize(), kRoundLarge);
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
  record(Action::SegmentAlloc, nullptr, reinterpret_cast<std::uintptr_t>(memory), size,
         stream);
  return block;
}

Block* DeviceCache::growExpandable(BlockPool& pool, StreamId stream,
                                   std::size_t rounded) {
  const std::size_t step = expandableStep();
  Segment* segment = nullptr;
  auto found = expandable_.find(stream);
  if (found != expandable_.end()) {
    segment = found->second;
  } else {
    // Reserve address space for everything the device could hold; mapping
    // decides what is really used.
    std::size_t range = limit_ != 0 ? limit_ : source_.memoryInfo(index_).total_bytes;
    if (range == 0) range = std::size_t{64} << 30;
    range = roundUpTo(std::max(range, rounded), step);
    void* base = source_.reserveAddressRange(index_, range);
    if (base == nullptr) return nullptr;
    segment = addSegment(base, stream, pool);
    segment->reserved = range;
    segment->expandable = true;
    expandable_.emplace(stream, segment);
    stats_.segments.add(false, 1);
  }
  Block* tail = segment->head;
  while (tail != nullptr && tail->next != nullptr) tail = tail->next;
  const std::size_t tail_free = (tail != nullptr && !tail->allocated) ? tail->size : 0;
  const std::size_t grow = roundUpTo(rounded - std::min(rounded, tail_free), step);
  if (segment->size + grow > segment->reserved || !fitsLimit(grow)) return nullptr;
  std::byte* at = segment->base + segment->size;
  if (!source_.mapPages(index_, at, grow)) return nullptr;
  segment->size += grow;
  stats_.reserved_bytes.add(false, sized(grow));
  ++stats_.num_device_alloc;
  record(Action::SegmentMap, nullptr, reinterpret_cast<std::uintptr_t>(at), grow, stream);
  Block* block = nullptr;
  if (tail_free > 0) {
    adjustInactiveSplit(tail, -1);
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
  if (block->size < rounded) {  // a tail too small even after growing: keep it
    adjustInactiveSplit(block, +1);
    pool.insert(block);
    return nullptr;
  }
  return block;
}

Block* DeviceCache::handOff(BlockPool& pool, StreamId stream, std::size_t rounded) {
  Block* best = nullptr;
  for (Block* candidate : pool.blocks) {
    if (candidate->stream == stream || !isFreeWholeSegment(candidate)) continue;
    if (!mayServe(candidate->size, rounded, settings_.max_split_size)) continue;
    if (best == nullptr || candidate->size < best->size) best = candidate;
  }
  if (best == nullptr) return nullptr;
  if (source_.hasEvents()) {
    // The old stream may still be using the memory it freed; the new stream
    // starts after that work instead of the memory staying unusable.
    const Device device = Device::unchecked(allocator_.deviceType(), index_);
    const EventId event = source_.recordEvent(Stream(device, best->stream));
    try {
      source_.streamWaitEvent(Stream(device, stream), event);
    } catch (...) {
      source_.releaseEvent(event);
      throw;
    }
    source_.releaseEvent(event);
  }
  pool.erase(best);
  best->stream = stream;
  best->segment->stream = stream;
  return best;
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
  block->allocated = true;
  block->requested = requested;
  block_stats_.allocated(block->pool->small, sized(block->size), sized(requested));
  if (settings_.max_split_size > 0 && block->size >= settings_.max_split_size) {
    stats_.oversize_allocations.add(1);
  }
  if (history_level_ != HistoryRecording::Off) {
    if (history_stacks_) block->stack = captureStack(3);
    record(Action::Alloc, block, reinterpret_cast<std::uintptr_t>(block->ptr),
           block->size, block->stream);
  }
}

// ---- freeing ----

// Like allocate, a small fast path: a block that no other stream used, from
// a default pool, while nothing rare is on, goes to its reuse list when that
// list is free or holds its size and has room; anything else is freeSlow
// (with the lock held).
void DeviceCache::free(Block* block) noexcept {
  BiasedMutex::Guard lock(mutex_);
  const bool small = block->pool == &small_;
  if (plain_ && block->stream_uses.empty() && (small || block->pool == &large_))
      [[likely]] {
    const std::size_t index = reuseIndex(block->stream, block->size);
    ReuseList& list = reuse_[index];
    if (list.count == 0 || (list.count < kReuseDepth && list.stream == block->stream &&
                            list.size == block->size)) [[likely]] {
      block_stats_.freed(small, sized(block->size), sized(block->requested), false);
      if (tracing_) [[unlikely]]
        traceFree(block);
      pushHeld(list, index, block);
      return;
    }
  }
  freeSlow(block);
}

ACCEL_HOT [[gnu::noinline]] void DeviceCache::freeSlow(Block* block) noexcept {
  const bool pending = !block->stream_uses.empty() && source_.hasEvents();
  block_stats_.freed(block->pool->small, sized(block->size), sized(block->requested),
                     pending);
  if (settings_.max_split_size > 0 && block->size >= settings_.max_split_size) {
    stats_.oversize_allocations.add(-1);
  }
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  // One clock read for both events of an immediate free.
  std::int64_t now = 0;
  if (history_level_ != HistoryRecording::Off) {
    now = clock_.now();
    record(Action::FreeRequested, block, address, block->size, block->stream, 0, now);
  }
  block->pending_free = true;
  if (pending) {
    recordFreeEvents(block);
    return;
  }
  block->stream_uses.clear();
  if (block->pool->owner == nullptr && hold(block, now)) return;
  returnBlock(block, now);
}

std::size_t DeviceCache::reuseIndex(StreamId stream, std::size_t size) noexcept {
  const std::uint64_t key = (static_cast<std::uint64_t>(size) >> 9) ^
                            (static_cast<std::uint64_t>(stream) << 40);
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 58);
}

bool DeviceCache::hold(Block* block, std::int64_t stamp) noexcept {
  const std::size_t index = reuseIndex(block->stream, block->size);
  ReuseList& list = reuse_[index];
  if (list.count > 0 && (list.stream != block->stream || list.size != block->size)) {
    releaseList(list);  // another size or stream had the list: it gives way
  }
  if (list.count == kReuseDepth) return false;
  pushHeld(list, index, block);
  if (history_level_ != HistoryRecording::Off) {
    record(Action::FreeCompleted, nullptr, reinterpret_cast<std::uintptr_t>(block->ptr),
           block->size, block->stream, 0, stamp);
  }
  return true;
}

void DeviceCache::pushHeld(ReuseList& list, std::size_t index, Block* block) noexcept {
  list.stream = block->stream;
  list.size = block->size;
  block->reuse_next = list.head;
  list.head = block;
  ++list.count;
  reuse_used_ |= std::uint64_t{1} << index;
  block->pending_free = false;
  block->requested = 0;
  block->stack.reset();
}

Block* DeviceCache::takeHeld(StreamId stream, std::size_t rounded) noexcept {
  const std::size_t index = reuseIndex(stream, rounded);
  ReuseList& list = reuse_[index];
  if (list.count == 0 || list.stream != stream || list.size != rounded) return nullptr;
  Block* block = list.head;
  list.head = block->reuse_next;
  block->reuse_next = nullptr;
  if (--list.count == 0) reuse_used_ &= ~(std::uint64_t{1} << index);
  return block;
}

void DeviceCache::releaseList(ReuseList& list) noexcept {
  while (list.head != nullptr) {
    Block* block = list.head;
    list.head = block->reuse_next;
    block->reuse_next = nullptr;
    returnBlock(block, 0, false);
  }
  list.count = 0;
  reuse_used_ &= ~(std::uint64_t{1} << static_cast<std::size_t>(&list - reuse_));
}

void DeviceCache::releaseHeld() noexcept {
  while (reuse_used_ != 0) releaseList(reuse_[std::countr_zero(reuse_used_)]);
}

ACCEL_COLD void DeviceCache::recordFreeEvents(Block* block) noexcept {
  const Device device = Device::unchecked(allocator_.deviceType(), index_);
  try {
    for (StreamId use : block->stream_uses) {
      pending_events_.emplace_back(source_.recordEvent(Stream(device, use)), block);
      ++block->event_count;
    }
  } catch (...) {
    // An event could not be recorded: the block cannot be proven idle, so
    // it stays out of the cache (leaked) rather than be reused too early.
    // The count keeps one for the missing event, so the events that were
    // recorded cannot bring it to zero.
    ++block->event_count;
    updatePlain();
    return;
  }
  block->stream_uses.clear();
  updatePlain();
}

void DeviceCache::returnBlock(Block* block, std::int64_t stamp,
                              bool record_completion) noexcept {
  BlockPool& pool = *block->pool;
  const std::size_t size = block->size;
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  const StreamId stream = block->stream;
  block->allocated = false;
  block->pending_free = false;
  block->requested = 0;
  block->stack.reset();
  // Merge with free neighbours. A neighbour already in the free set absorbs
  // the others and is reshaped in place (see BlockPool::reshape), so the
  // common free — next to the free rest of its segment — neither allocates
  // nor rebalances.
  Block* prev = block->prev;
  Block* next = block->next;
  const bool merge_prev = prev != nullptr && !prev->allocated;
  const bool merge_next = next != nullptr && !next->allocated;
  Block* merged = block;
  if (merge_prev) {
    adjustInactiveSplit(prev, -1);
    std::size_t merged_size = prev->size + block->size;
    prev->next = next;
    if (merge_next) {
      adjustInactiveSplit(next, -1);
      pool.erase(next);
      merged_size += next->size;
      prev->next = next->next;
      recycle(next);
    }
    if (prev->next != nullptr) prev->next->prev = prev;
    pool.reshape(prev, prev->ptr, merged_size);
    recycle(block);
    merged = prev;
  } else if (merge_next) {
    adjustInactiveSplit(next, -1);
    next->prev = prev;
    if (prev != nullptr) {
      prev->next = next;
    } else {
      next->segment->head = next;
    }
    pool.reshape(next, block->ptr, block->size + next->size);
    recycle(block);
    merged = next;
  } else {
    pool.insert(block);
  }
  adjustInactiveSplit(merged, +1);
  if (record_completion && history_level_ != HistoryRecording::Off) {
    record(Action::FreeCompleted, nullptr, address, size, stream, 0, stamp);
  }
  if (pool.owner != nullptr && pool.owner->users == 0)
    maybeReleasePrivatePool(pool.owner);
}

void DeviceCache::returnPending(Block* block) noexcept {
  block_stats_.returned(block->pool->small, sized(block->size));
  returnBlock(block);
}

void DeviceCache::recordStream(Block* block, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  if (stream == block->stream) return;
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) ==
      block->stream_uses.end()) {
    block->stream_uses.push_back(stream);
  }
}

[[gnu::noinline]] void DeviceCache::processEvents() noexcept {
  // In recording order; stop at the first event not yet reached so that the
  // scan stays short (later events on the same stream cannot be done either).
  while (!pending_events_.empty()) {
    auto [event, block] = pending_events_.front();
    if (!source_.eventCompleted(event)) break;
    pending_events_.pop_front();
    source_.releaseEvent(event);
    if (--block->event_count == 0) returnPending(block);
  }
  updatePlain();
}

void DeviceCache::synchronizeEvents() {
  if (pending_events_.empty()) return;
  ++stats_.num_sync_all_streams;
  while (!pending_events_.empty()) {
    auto [event, block] = pending_events_.front();
    source_.synchronizeEvent(event);
    pending_events_.pop_front();
    source_.releaseEvent(event);
    if (--block->event_count == 0) returnPending(block);
  }
  updatePlain();
}

void DeviceCache::updatePlain() noexcept {
  plain_ = pending_events_.empty() && allocating_to_pool_.empty() && !history_stacks_ &&
           settings_.max_split_size == 0;
  tracing_ = (history_level_ == HistoryRecording::All ||
              history_level_ == HistoryRecording::AllocationsOnly) &&
             history_capacity_ > 0;
}

// A trace entry of the fast paths. Both levels that trace (all, allocations
// only) keep their three actions, and the fast paths capture no stacks: once
// the ring is full (its steady state) an entry is written in place; until
// then record() grows it.
void DeviceCache::appendTrace(Action action, const Block* block,
                              std::int64_t stamp) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  if (history_.size() != history_capacity_) [[unlikely]] {
    record(action, nullptr, address, block->size, block->stream, 0, stamp);
    return;
  }
  TraceRecord& entry = history_[history_next_];
  if (++history_next_ == history_capacity_) history_next_ = 0;
  entry.action = action;
  entry.address = address;
  entry.size = block->size;
  entry.stream = block->stream;
  entry.stamp = stamp;
  entry.device_free = 0;
  entry.stack.reset();
}

// The fast paths' trace entries are out of line, so that a pair without
// history pays one test for them.
[[gnu::noinline]] void DeviceCache::traceAllocation(const Block* block) noexcept {
  appendTrace(Action::Alloc, block, clock_.now());
}

[[gnu::noinline]] void DeviceCache::traceFree(const Block* block) noexcept {
  const std::int64_t now = clock_.now();  // one clock read for both events
  appendTrace(Action::FreeRequested, block, now);
  appendTrace(Action::FreeCompleted, block, now);
}

// ---- giving memory back ----

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
  record(Action::SegmentFree, nullptr, reinterpret_cast<std::uintptr_t>(segment->base),
         size, segment->stream);
  recycle(block);
  segments_.erase(segment->base);
}

void DeviceCache::shrinkExpandable(Segment* segment) noexcept {
  Block* tail = segment->head;
  while (tail != nullptr && tail->next != nullptr) tail = tail->next;
  if (tail == nullptr || tail->allocated) return;
  const std::size_t step = expandableStep();
  const std::size_t tail_offset = static_cast<std::size_t>(tail->ptr - segment->base);
  const std::size_t keep_until = roundUpTo(tail_offset, step);
  if (keep_until >= segment->size) return;
  const std::size_t unmap = segment->size - keep_until;
  BlockPool& pool = *tail->pool;
  adjustInactiveSplit(tail, -1);
  pool.erase(tail);
  source_.unmapPages(index_, segment->base + keep_until, unmap);
  segment->size = keep_until;
  tail->size -= unmap;
  stats_.reserved_bytes.add(false, -sized(unmap));
  ++stats_.num_device_free;
  record(Action::SegmentUnmap, nullptr,
         reinterpret_cast<std::uintptr_t>(segment->base + keep_until), unmap,
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
  source_.releaseAddressRange(index_, segment->base, segment->reserved);
  stats_.segments.add(false, -1);
  expandable_.erase(segment->stream);
  segments_.erase(segment->base);
}

std::size_t DeviceCache::releaseCached(bool oversize_only) noexcept {
  std::size_t released = 0;
  std::vector<Block*> victims;
  std::vector<Segment*> expandable;
  for (auto& [base, segment] : segments_) {
    PrivatePool* owner = segment->pool->owner;
    if (owner != nullptr && owner->users > 0) continue;
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

void DeviceCache::garbageCollect() noexcept {
  std::size_t capacity = limit_ != 0 ? limit_ : source_.memoryInfo(index_).total_bytes;
  if (capacity == 0) return;
  const auto threshold = static_cast<std::int64_t>(
      settings_.garbage_collection_threshold * static_cast<double>(capacity));
  if (stats_.reserved_bytes.current <= threshold) return;
  // Largest free segments first: they bring the reservation down fastest.
  std::vector<Block*> victims;
  for (auto& [base, segment] : segments_) {
    if (segment->pool->owner == nullptr && !segment->expandable &&
        isFreeWholeSegment(segment->head)) {
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

ACCEL_COLD void DeviceCache::maybeReleasePrivatePool(PrivatePool* pool) noexcept {
  std::vector<Block*> victims;
  bool in_use = false;
  for (auto& [base, segment] : segments_) {
    if (segment->pool->owner != pool) continue;
    if (isFreeWholeSegment(segment->head)) {
      victims.push_back(segment->head);
    } else {
      in_use = true;
    }
  }
  for (Block* victim : victims) releaseSegment(victim);
  if (!in_use) private_pools_.erase(pool->id);
}

// ---- settings, pools ----

void DeviceCache::setSettings(const AllocatorSettings& settings) {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  settings_ = settings;
  stats_.max_split_size = sized(settings.max_split_size);
  updatePlain();
}

AllocatorSettings DeviceCache::settings() const {
  BiasedMutex::Guard lock(mutex_);
  return settings_;
}

void DeviceCache::setLimit(std::size_t bytes) {
  BiasedMutex::Guard lock(mutex_);
  limit_ = bytes;
}

void DeviceCache::retainPool(MempoolId id) {
  BiasedMutex::Guard lock(mutex_);
  auto& pool = private_pools_[id];
  if (!pool) pool = std::make_unique<PrivatePool>(id);
  ++pool->users;
}

void DeviceCache::releasePool(MempoolId id) {
  BiasedMutex::Guard lock(mutex_);
  auto found = private_pools_.find(id);
  ACCEL_CHECK(found != private_pools_.end() && found->second->users > 0, InvalidArgument,
              "releasePool(): memory pool {", id.first, ", ", id.second,
              "} has no users on device ", static_cast<int>(index_),
              "; release a pool only as often as it was retained");
  PrivatePool* pool = found->second.get();
  if (--pool->users > 0) return;
  std::erase_if(allocating_to_pool_,
                [&](const auto& entry) { return entry.second == pool; });
  updatePlain();
  maybeReleasePrivatePool(pool);
}

void DeviceCache::beginAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  auto found = private_pools_.find(id);
  ACCEL_CHECK(found != private_pools_.end() && found->second->users > 0, InvalidArgument,
              "beginAllocateToPool(): memory pool {", id.first, ", ", id.second,
              "} is not retained on device ", static_cast<int>(index_),
              "; call retainPool first");
  for (auto& entry : allocating_to_pool_) {
    if (entry.first == stream) {
      entry.second = found->second.get();
      return;
    }
  }
  allocating_to_pool_.emplace_back(stream, found->second.get());
  updatePlain();
}

void DeviceCache::endAllocateToPool(MempoolId id, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  std::erase_if(allocating_to_pool_, [&](const auto& entry) {
    return entry.first == stream && entry.second->id == id;
  });
  updatePlain();
}

// ---- queries ----

MemoryStats DeviceCache::stats() {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  MemoryStats out = stats_;
  block_stats_.writeTo(out);
  return out;
}

void DeviceCache::resetPeakStats() {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  stats_.resetPeaks();
  block_stats_.resetPeaks();
}

void DeviceCache::emptyCache() {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  synchronizeEvents();
  releaseCached(false);
}

void DeviceCache::adjustInactiveSplit(const Block* block, int sign) noexcept {
  if (block->allocated || (block->prev == nullptr && block->next == nullptr)) return;
  if (sign > 0) {
    block_stats_.splitFree(block->pool->small, sized(block->size));
  } else {
    block_stats_.splitGone(block->pool->small, sized(block->size));
  }
}

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
  block->in_free_set = {};
  return block;
}

Segment* DeviceCache::addSegment(void* base, StreamId stream, BlockPool& pool) {
  auto owned = std::make_unique<Segment>();
  owned->base = static_cast<std::byte*>(base);
  owned->stream = stream;
  owned->pool = &pool;
  Segment* segment = owned.get();
  segments_.emplace(segment->base, std::move(owned));
  return segment;
}

void DeviceCache::recycle(Block* block) noexcept {
  // The vector keeps its capacity; makeBlock sets the other fields.
  block->stream_uses.clear();
  block->stack.reset();
  block->next = spare_blocks_;
  spare_blocks_ = block;
}

// ---- out of memory ----

OutOfMemoryEvent DeviceCache::outOfMemoryFacts(std::size_t rounded,
                                               StreamId stream) const {
  OutOfMemoryEvent facts;
  facts.device = index_;
  facts.requested_bytes = rounded;
  const SegmentSource::DeviceMemoryInfo info = source_.memoryInfo(index_);
  facts.device_total_bytes = limit_ != 0 ? limit_ : info.total_bytes;
  facts.device_free_bytes = info.free_bytes;
  if (limit_ != 0) {
    const std::size_t under_limit =
        limit_ - std::min<std::size_t>(limit_, stats_.reserved_bytes.current);
    facts.device_free_bytes = std::min(facts.device_free_bytes, under_limit);
    if (info.total_bytes == 0) facts.device_free_bytes = under_limit;
  }
  facts.allocated_bytes = static_cast<std::size_t>(block_stats_.allocatedBytes());
  facts.reserved_bytes = static_cast<std::size_t>(stats_.reserved_bytes.current);
  facts.reserved_unallocated_bytes = facts.reserved_bytes - facts.allocated_bytes;
  std::size_t free_total = 0;
  for (const auto& [base, segment] : segments_) {
    if (segment->pool->owner != nullptr) facts.private_pool_bytes += segment->size;
    for (const Block* block = segment->head; block != nullptr; block = block->next) {
      if (block->allocated) continue;
      free_total += block->size;
      facts.largest_free_block = std::max(facts.largest_free_block, block->size);
    }
  }
  facts.fragmentation = free_total == 0
                            ? 0.0
                            : 1.0 - static_cast<double>(facts.largest_free_block) /
                                        static_cast<double>(free_total);
  facts.stream = Stream(Device::unchecked(allocator_.deviceType(), index_), stream);
  return facts;
}

std::string DeviceCache::outOfMemoryMessage(const OutOfMemoryEvent& facts) const {
  const Device device = Device::unchecked(allocator_.deviceType(), index_);
  std::string message = accel::detail::concat(
      device, " is out of memory: tried to allocate ", formatBytes(facts.requested_bytes),
      " (", facts.requested_bytes, " bytes) on stream ", facts.stream.id, ". Capacity: ",
      facts.device_total_bytes == 0 ? std::string("unknown")
                                    : formatBytes(facts.device_total_bytes),
      (limit_ != 0 ? " (the allocator's limit)" : ""),
      "; free: ", formatBytes(facts.device_free_bytes),
      "; allocated: ", formatBytes(facts.allocated_bytes),
      "; reserved but unallocated: ", formatBytes(facts.reserved_unallocated_bytes),
      "; in private pools: ", formatBytes(facts.private_pool_bytes),
      "; fragmentation: ", static_cast<int>(facts.fragmentation * 100.0 + 0.5),
      "% (largest free cached block ", formatBytes(facts.largest_free_block), ").");
  // Suggest a setting only where it would change something.
  const bool fragmented = facts.reserved_unallocated_bytes >= facts.requested_bytes;
  if (fragmented && !settings_.expandable_segments && source_.pageSize() > 0) {
    message +=
        " Much memory is reserved but unallocated; to avoid fragmentation set "
        "ACCEL_ALLOC_CONF=expandable_segments:true.";
  } else if (fragmented && settings_.max_split_size == 0) {
    message +=
        " Much memory is reserved but unallocated; to limit fragmentation set "
        "ACCEL_ALLOC_CONF=max_split_size_mb:<MiB>.";
  } else {
    message += " Free tensors you no longer need, or use smaller batches.";
  }
  return message;
}

// ---- history ----

void DeviceCache::recordHistory(const MemoryHistoryOptions& options) {
  BiasedMutex::Guard lock(mutex_);
  history_level_ = options.enabled;
  history_stacks_ = options.record_stack && options.enabled != HistoryRecording::Off;
  updatePlain();
  if (options.enabled == HistoryRecording::Off) {
    history_.clear();
    history_.shrink_to_fit();
    history_capacity_ = 0;
    history_next_ = 0;
    return;
  }
  const std::size_t capacity = options.max_entries;
  if (capacity != history_capacity_) {
    // Keep the newest entries that fit, in order.
    std::vector<TraceRecord> kept;
    const std::size_t count = history_.size();
    const std::size_t take = std::min(count, capacity);
    kept.reserve(take);
    for (std::size_t i = count - take; i < count; ++i) {
      kept.push_back(std::move(history_[(history_next_ + i) % count]));
    }
    history_ = std::move(kept);
    history_next_ = 0;
    history_capacity_ = capacity;
  }
  updatePlain();  // tracing_ needs the ring's capacity
}

void DeviceCache::record(Action action, const Block* block, std::uint64_t address,
                         std::uint64_t size, StreamId stream, std::uint64_t device_free,
                         std::int64_t stamp) {
  if (history_level_ == HistoryRecording::Off ||
      history_level_ == HistoryRecording::State || history_capacity_ == 0) {
    return;
  }
  if (history_level_ == HistoryRecording::AllocationsOnly &&
      (action != Action::Alloc && action != Action::FreeRequested &&
       action != Action::FreeCompleted && action != Action::Oom)) {
    return;
  }
  try {
    // Filled in place: the ring's oldest entry is reused, with no temporary.
    TraceRecord* slot = nullptr;
    if (history_.size() < history_capacity_) {
      slot = &history_.emplace_back();
    } else {
      slot = &history_[history_next_];
      if (++history_next_ == history_capacity_) history_next_ = 0;
    }
    TraceRecord& entry = *slot;
    entry.action = action;
    entry.address = address;
    entry.size = size;
    entry.stream = stream;
    entry.stamp = stamp != 0 ? stamp : clock_.now();
    entry.device_free = device_free;
    if (history_stacks_) {
      entry.stack = (block != nullptr && block->stack) ? block->stack : captureStack(3);
    } else {
      entry.stack.reset();
    }
  } catch (...) {
    // History is best effort: losing an entry must not fail an allocation.
  }
}

void DeviceCache::noteSnapshot() {
  BiasedMutex::Guard lock(mutex_);
  if (history_level_ == HistoryRecording::All) {
    record(Action::Snapshot, nullptr, 0, 0, kDefaultStreamId);
  }
}

void DeviceCache::snapshotInto(MemorySnapshot& out, bool include_trace) {
  BiasedMutex::Guard lock(mutex_);
  releaseHeld();
  const Device device = Device::unchecked(allocator_.deviceType(), index_);
  for (const auto& [base, segment] : segments_) {
    if (segment->head == nullptr) continue;
    MemorySegment view;
    view.device = device;
    view.address = reinterpret_cast<std::uintptr_t>(segment->base);
    view.total_size = segment->size;
    view.stream = Stream(device, segment->stream);
    view.is_large = !segment->pool->small;
    view.is_expandable = segment->expandable;
    if (segment->pool->owner != nullptr) view.pool = segment->pool->owner->id;
    for (const Block* block = segment->head; block != nullptr; block = block->next) {
      MemoryBlock item;
      item.address = reinterpret_cast<std::uintptr_t>(block->ptr);
      item.size = block->size;
      item.requested_size = block->requested;
      if (block->allocated) {
        item.state = block->pending_free ? MemoryBlock::State::ActivePendingFree
                                         : MemoryBlock::State::Allocated;
        view.active_size += block->size;
        view.requested_size += block->requested;
        if (!block->pending_free) view.allocated_size += block->size;
        item.frames = symbolizer_.symbolize(block->stack);
      }
      view.blocks.push_back(std::move(item));
    }
    out.segments.push_back(std::move(view));
  }
  if (out.device_traces.size() <= static_cast<std::size_t>(index_)) {
    out.device_traces.resize(static_cast<std::size_t>(index_) + 1);
  }
  if (!include_trace) return;
  std::vector<MemoryTraceEntry>& trace =
      out.device_traces[static_cast<std::size_t>(index_)];
  const std::size_t count = history_.size();
  trace.reserve(count);
  const std::size_t start = count < history_capacity_ ? 0 : history_next_;
  const TraceClock::Scale scale = clock_.scale();
  for (std::size_t i = 0; i < count; ++i) {
    const TraceRecord& record = history_[(start + i) % count];
    MemoryTraceEntry entry;
    entry.action = record.action;
    entry.address = record.address;
    entry.size = record.size;
    entry.stream = Stream(device, record.stream);
    entry.time_ns = scale.toNs(record.stamp);
    entry.device_free = record.device_free;
    entry.frame_details = symbolizer_.symbolize(record.stack);
    for (const MemoryFrame& frame : entry.frame_details) {
      entry.frames.push_back(frame.name + " (" + frame.filename + ")");
    }
    trace.push_back(std::move(entry));
  }
}

}  // namespace accel::memory::detail

namespace accel::memory {

// Here rather than in caching_allocator.cpp: it compiles as one function
// with DeviceCache::allocate.
ACCEL_HOT DataPtr CachingAllocator::allocate(DeviceIndex index, std::size_t bytes,
                                             Stream stream) {
  // device(index), inline: this is the one call per allocation.
  if (index < 0 || index >= static_cast<int>(devices_.size())) [[unlikely]]
    throwBadDevice(index);
  detail::DeviceCache& cache = *devices_[static_cast<std::size_t>(index)];
  const Device where = Device::unchecked(type_, index);
  if (stream.device != where) [[unlikely]]
    throwForeignStream(stream, where);
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, where);
  detail::Block* block = cache.allocate(bytes, stream.id);
  return DataPtr(block->ptr, block, &detail::freeCachedBlock, where);
}

}  // namespace accel::memory
