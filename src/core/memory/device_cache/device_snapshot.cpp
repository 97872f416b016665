// DeviceCache: the snapshot — every segment and block as they are, and the
// history ring in order, symbolized.
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::snapshotInto(MemorySnapshot& out, bool include_trace) {
  BiasedMutex::Guard lock(mutex_);
  // Every thread's cache stays claimed while the blocks are read: an owner's
  // free would otherwise write a block being read.
  ClaimedThreadCaches claimed(*this);
  reuse_.releaseAll([this](Block* held) { returnBlock(held, 0, false); });
  settleParked();
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
        item.frames = history_.symbolize(block->stack);
        if (block->stack) item.host_stack = block->stack->host;
      }
      view.blocks.push_back(std::move(item));
    }
    out.segments.push_back(std::move(view));
  }
  if (out.device_traces.size() <= static_cast<std::size_t>(index_)) {
    out.device_traces.resize(static_cast<std::size_t>(index_) + 1);
  }
  if (!include_trace) return;
  history_.appendTo(out.device_traces[static_cast<std::size_t>(index_)], device);
}

}  // namespace accel::memory::detail
