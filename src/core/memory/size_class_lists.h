// SizeClassLists: the free blocks of one stream in a small pool, one list per
// size, with a bitmap of the sizes that have blocks.
//
// Every small-pool block is a multiple of the 512 B quantum and at most one
// small segment (2 MiB), so there are 4096 sizes and each gets its own list:
// the best fit for a request is the first block of the smallest non-empty
// size at or above it, found by a find-first-set over one 64-bit word of the
// bitmap and, when that word has none, one over the summary word (bit w: word
// w has a non-empty size). Insert, erase and the best-fit search are a few
// instructions and touch no heap, where the balanced tree they replace paid a
// search, a rebalance and cache misses on every split and merge (a third of a
// training trace's replay time; docs/design-notes.md).
//
// Equal sizes are served last-freed first (the tree served the lowest
// address): the most recently freed block is the one most likely still in
// the processor's caches.
//
// Thread-safety: none; the owning BlockPool's owner guards it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "accel/memory/size_rules.h"
#include "memory/block.h"

namespace accel::memory::detail {

class SizeClassLists {
 public:
  static constexpr std::size_t kClasses = kSmallBuffer / kMinBlockSize;
  static constexpr std::size_t kWords = kClasses / 64;
  static_assert(kWords <= 64, "the summary is one 64-bit word");

  explicit SizeClassLists(StreamId stream) noexcept : stream_(stream) {}

  [[nodiscard]] StreamId stream() const noexcept { return stream_; }
  [[nodiscard]] bool empty() const noexcept { return summary_ == 0; }

  // `block` is free, of this stream, not in any list; its size is a
  // multiple of kMinBlockSize in [kMinBlockSize, kSmallBuffer].
  void insert(Block* block) noexcept {
    const std::size_t index = classOf(block->size);
    Block*& head = heads_[index];
    block->free_prev = nullptr;
    block->free_next = head;
    if (head != nullptr) head->free_prev = block;
    head = block;
    words_[index / 64] |= std::uint64_t{1} << (index % 64);
    summary_ |= std::uint64_t{1} << (index / 64);
  }

  // `block` is in this object's lists, at its current size.
  void erase(Block* block) noexcept {
    const std::size_t index = classOf(block->size);
    if (block->free_next != nullptr) block->free_next->free_prev = block->free_prev;
    if (block->free_prev != nullptr) {
      block->free_prev->free_next = block->free_next;
    } else {
      heads_[index] = block->free_next;
      if (block->free_next == nullptr) {
        std::uint64_t& word = words_[index / 64];
        word &= ~(std::uint64_t{1} << (index % 64));
        if (word == 0) summary_ &= ~(std::uint64_t{1} << (index / 64));
      }
    }
    block->free_prev = nullptr;
    block->free_next = nullptr;
  }

  // A free block of the smallest size >= `rounded`, or null.
  [[nodiscard]] Block* bestFit(std::size_t rounded) const noexcept {
    if (rounded > kSmallBuffer) return nullptr;
    const std::size_t index = classOf(rounded < kMinBlockSize ? kMinBlockSize : rounded);
    std::size_t word = index / 64;
    const std::uint64_t here = words_[word] & (~std::uint64_t{0} << (index % 64));
    if (here != 0)
      return heads_[word * 64 + static_cast<std::size_t>(std::countr_zero(here))];
    const std::uint64_t later =
        word + 1 < 64 ? summary_ & (~std::uint64_t{0} << (word + 1)) : 0;
    if (later == 0) return nullptr;
    word = static_cast<std::size_t>(std::countr_zero(later));
    return heads_[word * 64 + static_cast<std::size_t>(std::countr_zero(words_[word]))];
  }

  // Calls visit(block) for every free block, smallest sizes first.
  template <typename Visit>
  void forEach(Visit&& visit) const {
    for (std::uint64_t words = summary_; words != 0; words &= words - 1) {
      const auto word = static_cast<std::size_t>(std::countr_zero(words));
      for (std::uint64_t bits = words_[word]; bits != 0; bits &= bits - 1) {
        const std::size_t index =
            word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        for (Block* block = heads_[index]; block != nullptr; block = block->free_next)
          visit(block);
      }
    }
  }

 private:
  [[nodiscard]] static std::size_t classOf(std::size_t size) noexcept {
    return size / kMinBlockSize - 1;
  }

  StreamId stream_;
  std::uint64_t summary_ = 0;      // bit w: words_[w] != 0
  std::uint64_t words_[kWords]{};  // bit i of word w: heads_[w * 64 + i] != null
  Block* heads_[kClasses]{};
};

}  // namespace accel::memory::detail
