// BlockPool: the free blocks of one pool, in best-fit order; PrivatePool: the
// pair of pools a graph capture allocates from.
//
// Defined inline: the allocate and free paths call these on every pair that
// splits or merges, and are compiled as one function each (device_cache.cpp).
//
// Thread-safety: none; the owning DeviceCache's lock guards it.
#pragma once

#include <iterator>
#include <utility>
#include <vector>

#include "memory/block.h"

namespace accel::memory::detail {

struct PrivatePool;

// The free blocks of one pool, ordered for best fit. Set nodes are recycled
// (erase keeps the emptied node, insert reuses one), and a block whose address
// or size changes is moved in place when its order among its neighbours
// allows: so the hot path of split-on-allocate and merge-on-free touches no
// heap and rebalances no tree.
struct BlockPool {
  BlockPool(bool small_pool, PrivatePool* private_owner) noexcept
      : small(small_pool), owner(private_owner) {}

  // Throws std::bad_alloc only when no recycled node is left.
  void insert(Block* block);
  void erase(Block* block) noexcept;
  // Gives a free block of this set a new address and size (the same block
  // object, so the set still holds it): in place when it keeps its rank
  // among its neighbours, else relinked through its own node.
  void reshape(Block* block, std::byte* ptr, std::size_t size) noexcept;

  FreeSet blocks;  // free blocks only
  const bool small;
  PrivatePool* const owner;  // nullptr: the device's default pools

 private:
  void keepNode(FreeSet::node_type node) noexcept;
  std::vector<FreeSet::node_type> spare_nodes_;
};

struct PrivatePool {
  explicit PrivatePool(MempoolId pool_id) : id(pool_id) {}
  MempoolId id;
  int users = 0;
  BlockPool small{true, this};
  BlockPool large{false, this};
};

inline void BlockPool::insert(Block* block) {
  if (spare_nodes_.empty()) {
    block->in_free_set = blocks.insert(block).first;
    return;
  }
  FreeSet::node_type node = std::move(spare_nodes_.back());
  spare_nodes_.pop_back();
  node.value() = block;
  block->in_free_set = blocks.insert(std::move(node)).position;
}

inline void BlockPool::erase(Block* block) noexcept {
  keepNode(blocks.extract(block->in_free_set));
  block->in_free_set = {};
}

inline void BlockPool::keepNode(FreeSet::node_type node) noexcept {
  try {
    spare_nodes_.push_back(std::move(node));
  } catch (...) {
    // No room to keep it: the node is freed instead.
  }
}

inline void BlockPool::reshape(Block* block, std::byte* ptr, std::size_t size) noexcept {
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

}  // namespace accel::memory::detail
