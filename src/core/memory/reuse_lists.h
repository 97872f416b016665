// ReuseLists: freed blocks held, unmerged, for the next request of their size
// and stream, which takes one back without a search, a split or a merge.
//
// 64 lists, chosen by hashing (stream, size); a list holds blocks of one size
// and stream at a time, at most kDepth of them (kUniformDepth of a size with
// a uniform pool, size_rules.h). A held block keeps its `allocated` flag, so
// nothing merges with it or gives its segment back; the figures count it as
// free. Before anything else looks at the free blocks (a request that
// misses, stats, snapshots, emptyCache, the OOM path, settings) held blocks
// are returned to the free set as if freed then: a small-pool miss returns
// its stream's of the "mixed" sizes (releaseMixed), the uniform pool's and
// other streams' stay.
// The device keeps one set (under its lock) and each thread cache one
// (thread_cache.h).
//
// Thread-safety: none; its owner guards it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "accel/memory/size_rules.h"
#include "memory/block.h"

namespace accel::memory::detail {

struct ReuseList {
  StreamId stream = kDefaultStreamId;
  std::size_t size = 0;
  Block* head = nullptr;
  int count = 0;
};

class ReuseLists {
 public:
  static constexpr int kLists = 64;
  static constexpr int kDepth = 8;  // blocks a list holds at most
  // ... or of a uniform size (size_rules.h): their pools never fragment, so
  // a cache may hold more of the many small blocks a step frees and asks for
  // again.
  static constexpr int kUniformDepth = 64;

  // The size's hash, turned by the stream id's low 12 bits folded into six:
  // the default stream (0) keeps the size's own list, and one size on streams
  // 0..63 (or on 64 ids a multiple of 64 apart) gets 64 different lists, so
  // that requests rotating over streams do not evict each other.
  [[nodiscard]] static std::size_t indexOf(StreamId stream, std::size_t size) noexcept {
    const std::uint64_t hashed =
        ((static_cast<std::uint64_t>(size) >> 9) * 0x9E3779B97F4A7C15ULL) >> 58;
    const auto id = static_cast<std::uint64_t>(stream);
    return static_cast<std::size_t>((hashed ^ id ^ (id >> 6)) & (kLists - 1));
  }
  [[nodiscard]] ReuseList& list(std::size_t index) noexcept { return lists_[index]; }
  // True when `block` can go on list `index` now: it is free, or holds
  // blocks of the same size and stream and has room.
  [[nodiscard]] bool hasRoomFor(std::size_t index, const Block* block) const noexcept {
    const ReuseList& list = lists_[index];
    return list.count == 0 ||
           (list.count < (isUniformSize(block->size) ? kUniformDepth : kDepth) &&
            list.stream == block->stream && list.size == block->size);
  }
  // Holds `block` on list `index` (hasRoomFor was true); the block is not
  // pending_free (a free with pending work is never held).
  void push(std::size_t index, Block* block) noexcept {
    ReuseList& list = lists_[index];
    list.stream = block->stream;
    list.size = block->size;
    block->reuse_next = list.head;
    list.head = block;
    ++list.count;
    used_ |= std::uint64_t{1} << index;
    if (!isUniformSize(block->size)) mixed_ |= std::uint64_t{1} << index;
    block->requested = 0;
    block->resetStack();
  }
  // Puts back the block take() just returned, as it was.
  void putBack(std::size_t index, Block* block) noexcept {
    ReuseList& list = lists_[index];
    block->reuse_next = list.head;
    list.head = block;
    ++list.count;
    used_ |= std::uint64_t{1} << index;
    if (!isUniformSize(block->size)) mixed_ |= std::uint64_t{1} << index;
  }
  // A held block of exactly `rounded` bytes on `stream`, or null.
  [[nodiscard]] Block* take(StreamId stream, std::size_t rounded) noexcept {
    const std::size_t index = indexOf(stream, rounded);
    ReuseList& list = lists_[index];
    if (list.count == 0 || list.stream != stream || list.size != rounded) return nullptr;
    Block* block = list.head;
    list.head = block->reuse_next;  // its reuse_next is stale until pushed again
    if (--list.count == 0) {
      used_ &= ~(std::uint64_t{1} << index);
      mixed_ &= ~(std::uint64_t{1} << index);
    }
    return block;
  }
  [[nodiscard]] bool empty() const noexcept { return used_ == 0; }
  [[nodiscard]] bool mixedEmpty() const noexcept { return mixed_ == 0; }
  // Empties list `index`, handing each block to give(block).
  template <typename Give>
  void releaseList(std::size_t index, Give&& give) noexcept {
    ReuseList& list = lists_[index];
    while (list.head != nullptr) {
      Block* block = list.head;
      list.head = block->reuse_next;
      block->reuse_next = nullptr;
      give(block);
    }
    list.count = 0;
    used_ &= ~(std::uint64_t{1} << index);
    mixed_ &= ~(std::uint64_t{1} << index);
  }
  // Empties every list of `stream`'s blocks of a size without a uniform pool
  // (size_rules.h), handing each block to give(block). Other streams' lists
  // stay: their blocks could neither serve nor merge with `stream`'s.
  template <typename Give>
  void releaseMixed(StreamId stream, Give&& give) noexcept {
    for (std::uint64_t todo = mixed_; todo != 0; todo &= todo - 1) {
      const auto index = static_cast<std::size_t>(std::countr_zero(todo));
      if (lists_[index].stream == stream) releaseList(index, give);
    }
  }
  // How many blocks the lists hold.
  [[nodiscard]] std::int64_t count() const noexcept {
    std::int64_t held = 0;
    for (std::uint64_t todo = used_; todo != 0; todo &= todo - 1)
      held += lists_[static_cast<std::size_t>(std::countr_zero(todo))].count;
    return held;
  }
  // Empties every list, handing each block to give(block).
  template <typename Give>
  void releaseAll(Give&& give) noexcept {
    while (used_ != 0)
      releaseList(static_cast<std::size_t>(std::countr_zero(used_)), give);
  }

 private:
  ReuseList lists_[kLists];
  std::uint64_t used_ = 0;   // bit i: lists_[i] holds blocks
  std::uint64_t mixed_ = 0;  // ... of a size without a uniform pool
};

// Held blocks of the quantum (the uniform pool's, size_rules.h) on the
// default stream, last freed first, at most ReuseLists::kUniformDepth: what
// most of a training step's requests take back, so a thread cache keeps
// them apart from its lists, with no hash and no size or stream to compare.
//
// Thread-safety: none; its owner guards it.
class QuantumStack {
 public:
  [[nodiscard]] Block* top() const noexcept { return top_; }
  [[nodiscard]] bool hasRoom() const noexcept {
    return count_ < ReuseLists::kUniformDepth;
  }
  [[nodiscard]] std::int64_t count() const noexcept { return count_; }
  // Holds `block` (hasRoom() was true), as ReuseLists::push does.
  void push(Block* block) noexcept {
    block->requested = 0;
    block->resetStack();
    block->reuse_next = top_;
    top_ = block;
    ++count_;
  }
  // Takes top() (not null) back.
  void pop() noexcept {
    top_ = top_->reuse_next;
    --count_;
  }
  // Empties the stack, handing each block to give(block).
  template <typename Give>
  void releaseAll(Give&& give) noexcept {
    while (Block* block = top_) {
      top_ = block->reuse_next;
      block->reuse_next = nullptr;
      give(block);
    }
    count_ = 0;
  }

 private:
  Block* top_ = nullptr;
  std::int64_t count_ = 0;
};

}  // namespace accel::memory::detail
