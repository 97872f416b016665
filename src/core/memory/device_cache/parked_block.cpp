// DeviceCache: settling the large pool's parked block (parked_block.h says
// what it is and when it is settled).
//
// Thread-safety: the device's lock is held (DeviceCache's private members).
#include "memory/device_cache/parked_block.h"

namespace accel::memory::detail {

void DeviceCache::parkRecorded(Block* block) noexcept {
  // park's work with its history entries (the free's two, with one clock
  // read) and the block's stack let go, in the order freeSlow and
  // returnBlock would write them.
  const std::size_t size = block->size;
  const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
  std::int64_t now = 0;
  if (history_.recording()) {
    now = history_.now();
    history_.record(MemoryTraceEntry::Action::FreeRequested, block, address, size,
                    block->stream, 0, now);
  }
  block->resetStack();
  countPark(block);
  if (history_.recording())
    history_.record(MemoryTraceEntry::Action::FreeCompleted, nullptr, address, size,
                    block->stream, 0, now);
  parked_ = block;
}

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
