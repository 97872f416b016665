// DeviceCache: settling the large pool's parked block (parked_block.h says
// what it is and when it is settled).
//
// Thread-safety: the device's lock is held (DeviceCache's private members).
#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

void DeviceCache::settleParked() noexcept {
  Block* const block = parked_;
  if (block == nullptr) return;
  parked_ = nullptr;
  // returnBlock's merge with the free block after it (figures and history
  // were done by park).
  Block* const prev = block->prev;
  Block* const rest = block->next;
  block->allocated = false;
  rest->prev = prev;
  if (prev != nullptr) {
    prev->next = rest;
  } else {
    rest->segment->head = rest;
  }
  large_.reshape(rest, block->ptr, block->size + rest->size);
  recycle(block);
}

}  // namespace accel::memory::detail
