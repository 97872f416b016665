// DeviceCache: the large pool's parked block — a one-deep cache that undoes
// a cut instead of merging and cutting again. park and unpark are defined
// here, inline, for the free and allocate paths that are compiled as one
// function each (device_cache.cpp); settleParked and parkRecorded are in
// parked_block.cpp, the only other file that includes this header.
//
// Large-pool blocks are never held (docs/design-notes.md, "Large blocks are
// not held"): a freed one merges at once with its free neighbours, so the
// large pool places every block where PyTorch's rules would. But the most
// common large pair — a block cut from the front of a free block and freed
// before anything else changed in the large pool — ends where it began: the
// merge gives back the very free block the cut was made from, and the next
// request of the same size on the same stream finds it again by best fit
// and cuts the same block. So such a block is parked instead: its free is
// counted and recorded (figures, history) as the free and merge would be,
// but the block stays where it is, with its rest in the free set. The next
// request of its size on its stream takes it back, counted and recorded as
// the search and the cut would be; anything else that looks at the large
// pool or the segments first settles it (the merge, without counting it
// again): another large request or free, a new segment, and every place
// that returns held blocks (stats, snapshots, emptyCache, settings, the
// out-of-memory path, a fork child's setting aside). Every placement and
// every figure is the same as merging at once; the pair is a few field
// updates instead of a merge, a search and a split.
//
// Thread-safety: the device's lock is held (DeviceCache's private members).
#pragma once

#include "memory/device_cache/device_cache.h"

namespace accel::memory::detail {

inline bool DeviceCache::park(Block* block) noexcept {
  // The block last cut from large_, with large_ unchanged since: the merge
  // would restore the free block it was cut from. Nothing rare is on
  // (plain_), and the free is an immediate one.
  if (block != last_cut_ || large_.changes() != last_cut_changes_ || !plain_ ||
      block->has_stream_uses || block->uses.load(std::memory_order_relaxed) != 0) {
    return false;
  }
  Block* const prev = block->prev;
  Block* const rest = block->next;
  if (rest == nullptr || rest->allocated || (prev != nullptr && !prev->allocated))
    return false;
  // With history entries to write or a stack to let go, out of line: the
  // common park makes no call.
  if (history_.recording() || block->has_stack) [[unlikely]] {
    parkRecorded(block);
    return true;
  }
  countPark(block);
  parked_ = block;
  return true;
}

inline void DeviceCache::countPark(Block* block) noexcept {
  // freeSlow's figures, then returnBlock's for a merge with the free block
  // after it. Still `allocated`, as a held block is: nothing merges with it
  // and its segment is not whole; with no request, no lookup sees it handed
  // out.
  const Block* const rest = block->next;
  const std::size_t size = block->size;
  block_stats_.freed(/*small=*/false, sized(size), sized(block->requested), false);
  block->requested = 0;
  block->pending_free = false;
  if (block->prev != nullptr || rest->next != nullptr) {
    block_stats_.splitReplaced(false, sized(rest->size), 1, sized(size + rest->size));
  } else {
    block_stats_.splitGone(false, sized(rest->size), 1);
  }
}

inline Block* DeviceCache::unpark(std::size_t rounded, std::size_t bytes,
                                  StreamId stream) {
  Block* const block = parked_;
  if (block->size != rounded || block->stream != stream) return nullptr;
  parked_ = nullptr;
  // takeFree's figures for cutting it from the merged block (whose
  // neighbours are the block's before and its rest's after), then the
  // allocation's. large_ is as the cut left it, so last_cut_ still holds.
  const Block* const rest = block->next;
  if (block->prev != nullptr || rest->next != nullptr) {
    block_stats_.splitReplaced(false, sized(rounded + rest->size), 1, sized(rest->size));
  } else {
    block_stats_.splitFree(false, sized(rest->size));
  }
  markAllocated(block, bytes, /*small=*/false);
  return block;
}

}  // namespace accel::memory::detail
