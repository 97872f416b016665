// DeviceCache: streams and events — a block freed while other streams still
// use it waits for its events (pending_frees.h) before it returns to the
// cache, and a free segment of one stream is handed to another behind an
// event.
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
  pending_.recordFor(block);
  updatePlain();
}

[[gnu::noinline]] void DeviceCache::processEvents() noexcept {
  pending_.processCompleted([this](Block* block) { returnPending(block); });
  updatePlain();
}

void DeviceCache::synchronizeEvents() {
  if (pending_.empty()) return;
  ++stats_.num_sync_all_streams;
  (void)pending_.synchronizeAll([this](Block* block) { returnPending(block); });
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
