// DeviceCache: streams and events — a block freed while other streams still
// use it waits for one event per stream before it returns to the cache, and a
// free segment of one stream is handed to another behind an event.
#include <algorithm>

#include "accel/memory/size_rules.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::recordStream(Block* block, StreamId stream) {
  BiasedMutex::Guard lock(mutex_);
  if (stream == block->stream) return;
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) ==
      block->stream_uses.end()) {
    block->addStreamUse(stream);
  }
}

[[gnu::noinline, gnu::cold]] void DeviceCache::recordFreeEvents(Block* block) noexcept {
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
  block->clearStreamUses();
  updatePlain();
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

void DeviceCache::returnPending(Block* block) noexcept {
  block_stats_.returned(block->pool->small, sized(block->size));
  returnBlock(block);
}

Block* DeviceCache::handOff(BlockPool& pool, StreamId stream, std::size_t rounded) {
  Block* best = nullptr;
  // The smallest whole free segment of another stream; among equal sizes the
  // first in (stream, address) order, whatever order the pool visits them in.
  pool.forEachFree([&](Block* candidate) {
    if (candidate->stream == stream || !isFreeWholeSegment(candidate)) return;
    if (!mayServe(candidate->size, rounded, settings_.max_split_size)) return;
    if (best == nullptr || candidate->size < best->size ||
        (candidate->size == best->size && BlockOrder{}(candidate, best)))
      best = candidate;
  });
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

}  // namespace accel::memory::detail
