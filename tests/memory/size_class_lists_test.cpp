// SizeClassLists (src/core/memory/size_class_lists.h): the small pool's
// exact-size free lists and their bitmap. Sizes are picked to sit on either
// side of a bitmap word (64 sizes, 32 KiB) and at both ends of the range, where
// a wrong shift or a missed summary bit would show.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "memory/size_class_lists.h"

namespace accel::memory::detail {
namespace {

constexpr std::size_t kKiB = 1024;

class MemorySizeClassLists : public ::testing::Test {
 protected:
  Block* block(std::size_t size) {
    Block& made = blocks_.emplace_back();
    made.size = size;
    return &made;
  }
  SizeClassLists lists_{kDefaultStreamId};

 private:
  std::deque<Block> blocks_;
};

TEST_F(MemorySizeClassLists, BestFitIsTheSmallestSizeAtLeastTheRequest) {
  Block* const quantum = block(512);
  Block* const word_end = block(32 * kKiB);         // last size of word 0
  Block* const next_word = block(32 * kKiB + 512);  // first size of word 1
  Block* const far = block(1500 * kKiB);
  Block* const whole = block(kSmallBuffer);  // last size of the last word
  for (Block* b : {whole, far, next_word, word_end, quantum}) lists_.insert(b);
  EXPECT_EQ(lists_.bestFit(1), quantum);
  EXPECT_EQ(lists_.bestFit(512), quantum);
  EXPECT_EQ(lists_.bestFit(1024), word_end);
  EXPECT_EQ(lists_.bestFit(32 * kKiB), word_end);
  EXPECT_EQ(lists_.bestFit(32 * kKiB + 512), next_word);
  EXPECT_EQ(lists_.bestFit(33 * kKiB), far);  // skips whole empty words
  EXPECT_EQ(lists_.bestFit(1500 * kKiB + 512), whole);
  EXPECT_EQ(lists_.bestFit(kSmallBuffer), whole);
  EXPECT_EQ(lists_.bestFit(kSmallBuffer + 512), nullptr);
}

TEST_F(MemorySizeClassLists, ErasingTheLastBlockOfASizeClearsItsBits) {
  Block* const small = block(4 * kKiB);
  Block* const large = block(512 * kKiB);
  lists_.insert(small);
  lists_.insert(large);
  lists_.erase(small);
  EXPECT_EQ(lists_.bestFit(512), large);
  lists_.erase(large);
  EXPECT_EQ(lists_.bestFit(512), nullptr);
  EXPECT_TRUE(lists_.empty());
}

TEST_F(MemorySizeClassLists, EqualSizesAreServedLastFreedFirstAndErasedFromAnyPlace) {
  Block* const first = block(8 * kKiB);
  Block* const second = block(8 * kKiB);
  Block* const third = block(8 * kKiB);
  for (Block* b : {first, second, third}) lists_.insert(b);
  EXPECT_EQ(lists_.bestFit(8 * kKiB), third);
  lists_.erase(second);  // from the middle of the list
  EXPECT_EQ(lists_.bestFit(8 * kKiB), third);
  lists_.erase(third);  // the head
  EXPECT_EQ(lists_.bestFit(8 * kKiB), first);
  lists_.erase(first);
  EXPECT_TRUE(lists_.empty());
}

TEST_F(MemorySizeClassLists, ForEachVisitsEveryBlockSmallestSizesFirst) {
  Block* const c = block(kSmallBuffer);
  Block* const a = block(512);
  Block* const b1 = block(40 * kKiB);
  Block* const b2 = block(40 * kKiB);
  for (Block* b : {c, b1, a, b2}) lists_.insert(b);
  std::vector<std::size_t> sizes;
  lists_.forEach([&](const Block* b) { sizes.push_back(b->size); });
  EXPECT_EQ(sizes, (std::vector<std::size_t>{512, 40 * kKiB, 40 * kKiB, kSmallBuffer}));
}

}  // namespace
}  // namespace accel::memory::detail
