// BlockPool: the free blocks of one pool, found by best fit; PrivatePool: the
// pair of pools a graph capture allocates from.
//
// Defined inline: the allocate and free paths call these on every pair that
// splits or merges, and are compiled as one function each (device_cache.cpp).
//
// Thread-safety: none; the owning DeviceCache's lock guards it.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "memory/block.h"
#include "memory/size_class_lists.h"

namespace accel::memory::detail {

struct PrivatePool;

// The free blocks of one pool. A small pool keeps them in exact-size lists
// per stream (size_class_lists.h): its blocks are at most one 2 MiB segment,
// so every size has a list and best fit is a bitmap search. A large pool's
// sizes are unbounded, so it keeps a set ordered by (stream, size, address);
// its nodes are recycled (erase keeps the emptied node, insert reuses one),
// and a block whose address or size changes is moved in place when its order
// among its neighbours allows, so a split or a merge there touches no heap
// and rebalances no tree either.
struct BlockPool {
  BlockPool(bool small_pool, PrivatePool* private_owner, bool may_hold = false) noexcept
      : small(small_pool), owner(private_owner), holds(may_hold) {}

  // Throws std::bad_alloc only when a structure for the block must be made
  // (a stream's first free small block, no recycled set node left).
  void insert(Block* block);
  void erase(Block* block) noexcept;
  // Gives a free block of this pool a new address and size (the same block
  // object, so the pool still holds it).
  void reshape(Block* block, std::byte* ptr, std::size_t size) noexcept;
  // A free block of `stream` of the smallest size >= `rounded` (in a large
  // pool, the lowest address among those), or null.
  [[nodiscard]] Block* bestFit(StreamId stream, std::size_t rounded) noexcept;
  // Calls visit(block) for every free block.
  template <typename Visit>
  void forEachFree(Visit&& visit) const;
  // How many times a large pool's free set has changed (insert, erase,
  // reshape): equal counts mean the same free blocks in the same places
  // (DeviceCache's parked block). A small pool does not count.
  [[nodiscard]] std::uint64_t changes() const noexcept { return changes_; }

  const bool small;
  PrivatePool* const owner;  // nullptr: the device's default pools
  // Its freed blocks may be held (reuse_lists.h): the device's default small
  // and uniform pools.
  const bool holds;

 private:
  [[nodiscard]] SizeClassLists* listsFor(StreamId stream) const noexcept;
  void keepNode(FreeSet::node_type node) noexcept;
  void reshapeInSet(Block* block, std::byte* ptr, std::size_t size) noexcept;

  FreeSet blocks_;             // large pool: free blocks only
  std::uint64_t changes_ = 0;  // large pool: changes of blocks_ (changes())
  std::vector<FreeSet::node_type> spare_nodes_;
  // Small pool: one per stream that has had a free block (kept when empty:
  // a stream frees again). Few streams, so found by a linear scan, after a
  // look at the first one's (first_: the default stream's in nearly every
  // program), which every split, merge and search asks for.
  std::vector<std::unique_ptr<SizeClassLists>> lists_;
  SizeClassLists* first_ = nullptr;
};

struct PrivatePool {
  explicit PrivatePool(MempoolId pool_id) : id(pool_id) {}
  MempoolId id;
  int users = 0;
  BlockPool small{true, this};
  BlockPool large{false, this};
};

inline SizeClassLists* BlockPool::listsFor(StreamId stream) const noexcept {
  if (first_ != nullptr && first_->stream() == stream) [[likely]]
    return first_;
  for (const auto& lists : lists_) {
    if (lists->stream() == stream) return lists.get();
  }
  return nullptr;
}

inline void BlockPool::insert(Block* block) {
  if (small) {
    SizeClassLists* lists = listsFor(block->stream);
    if (lists == nullptr) {
      lists = lists_.emplace_back(std::make_unique<SizeClassLists>(block->stream)).get();
      first_ = lists_.front().get();
    }
    lists->insert(block);
    return;
  }
  ++changes_;
  if (spare_nodes_.empty()) {
    block->in_free_set = blocks_.insert(block).first;
    return;
  }
  FreeSet::node_type node = std::move(spare_nodes_.back());
  spare_nodes_.pop_back();
  node.value() = block;
  block->in_free_set = blocks_.insert(std::move(node)).position;
}

inline void BlockPool::erase(Block* block) noexcept {
  if (small) {
    listsFor(block->stream)->erase(block);
    return;
  }
  ++changes_;
  keepNode(blocks_.extract(block->in_free_set));
  block->in_free_set = {};
}

inline void BlockPool::keepNode(FreeSet::node_type node) noexcept {
  try {
    spare_nodes_.push_back(std::move(node));
  } catch (...) {
    // No room to keep it: the node is freed instead.
  }
}

inline Block* BlockPool::bestFit(StreamId stream, std::size_t rounded) noexcept {
  if (small) {
    const SizeClassLists* lists = listsFor(stream);
    return lists != nullptr ? lists->bestFit(rounded) : nullptr;
  }
  const auto found = blocks_.lower_bound(FreeKey{stream, rounded});
  if (found == blocks_.end() || (*found)->stream != stream) return nullptr;
  return *found;
}

template <typename Visit>
void BlockPool::forEachFree(Visit&& visit) const {
  if (small) {
    for (const auto& lists : lists_) lists->forEach(visit);
    return;
  }
  for (Block* block : blocks_) visit(block);
}

inline void BlockPool::reshape(Block* block, std::byte* ptr, std::size_t size) noexcept {
  if (small) {
    // Its list is its size's: it moves to the new size's list (the stream's
    // lists exist, since the block is in them).
    SizeClassLists* lists = listsFor(block->stream);
    lists->erase(block);
    block->ptr = ptr;
    block->size = size;
    lists->insert(block);
    return;
  }
  reshapeInSet(block, ptr, size);
}

inline void BlockPool::reshapeInSet(Block* block, std::byte* ptr,
                                    std::size_t size) noexcept {
  // The set orders by what the pointers point at, so changing the block
  // changes its key. It stays where it is when it still ranks between its
  // neighbours (the usual case: the rest of a split, a merge); otherwise its
  // node is unlinked (no comparisons) and relinked at the new rank. Sizes
  // only change with addresses inside one stream's blocks, so a block that
  // grew can only have passed later ones and one that shrank earlier ones.
  ++changes_;
  const FreeSet::iterator at = block->in_free_set;
  const bool grew = size > block->size;
  block->ptr = ptr;
  block->size = size;
  const BlockOrder before;
  if (grew) {
    const auto next = std::next(at);
    if (next == blocks_.end() || before(block, *next)) return;
  } else {
    if (at == blocks_.begin() || before(*std::prev(at), block)) return;
  }
  block->in_free_set = blocks_.insert(blocks_.extract(at)).position;
}

}  // namespace accel::memory::detail
