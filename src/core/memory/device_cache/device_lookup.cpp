// DeviceCache: what a backend's checks look up (the block or segment holding
// an address) and the BlockUses that keep a block out of the cache while a
// backend's work names it.
//
// Nothing here is on the allocate or free path: a lookup searches the
// segments by base address, then walks one segment's blocks in address
// order. That walk is as long as the segment has blocks (a 2 MiB small
// segment holds at most 4 096), which a backend pays on a copy or a kernel
// launch, not on every allocation.
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

Block* DeviceCache::blockAt(const void* ptr) const noexcept {
  auto* address = static_cast<const std::byte*>(ptr);
  auto after = segments_.upper_bound(const_cast<std::byte*>(address));
  if (after == segments_.begin()) return nullptr;
  const Segment& segment = *std::prev(after)->second;
  // An expandable segment's blocks cover its mapped bytes only.
  if (address >= segment.base + segment.size) return nullptr;
  for (Block* block = segment.head; block != nullptr; block = block->next) {
    if (address < block->ptr + block->size) return block;
  }
  return nullptr;
}

BlockInfo DeviceCache::infoOf(const Block* block) const noexcept {
  return BlockInfo{
      block->ptr, block->size, block->requested,
      Stream(Device::unchecked(allocator_.deviceType(), index_), block->stream),
      block->freed_while_used};
}

bool DeviceCache::holds(const void* ptr) const noexcept {
  BiasedMutex::Guard lock(mutex_);
  return blockAt(ptr) != nullptr;
}

std::optional<BlockInfo> DeviceCache::findBlock(const void* ptr) const {
  BiasedMutex::Guard lock(mutex_);
  const Block* block = blockAt(ptr);
  if (block == nullptr || !isHandedOut(block)) return std::nullopt;
  return infoOf(block);
}

Block* DeviceCache::useBlock(const void* ptr, BlockInfo& info) {
  BiasedMutex::Guard lock(mutex_);
  Block* block = blockAt(ptr);
  if (block == nullptr || !isHandedOut(block) || block->freed_while_used) return nullptr;
  block->uses.fetch_add(1, std::memory_order_relaxed);
  info = infoOf(block);
  return block;
}

void DeviceCache::retainUse(Block* block) noexcept {
  BiasedMutex::Guard lock(mutex_);
  block->uses.fetch_add(1, std::memory_order_relaxed);
}

void DeviceCache::releaseUse(Block* block) noexcept {
  BiasedMutex::Guard lock(mutex_);
  if (block->uses.fetch_sub(1, std::memory_order_acq_rel) != 1 ||
      !block->freed_while_used) {
    return;
  }
  block->freed_while_used = false;
  // The free the DataPtr asked for, now that no use is left.
  freeSlow(block);
}

}  // namespace accel::memory::detail
