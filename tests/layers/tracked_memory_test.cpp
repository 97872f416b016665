// The validation layer's memory books (tracked_memory.h): each thread files
// the blocks it makes on a lane of its own, so threads that make and free
// blocks at once share no lock; a block made on one thread is freed on
// another; a lookup finds the blocks of every thread; clear() forgets them
// all; a thread's lane outlives the thread and the next new thread takes it
// over; with the books switched off nothing is kept. Each thread's
// quarantine holds the frees it made, oldest out first past its limits;
// held blocks are found by address until they go; a second free of a held
// block is told apart. The sources are compiled in (the books are internal
// to libaccel).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "layers/validation/tracked_memory.h"

namespace accel::detail {
namespace {

// A live block's record where the decorator's note would keep it.
class Block {
 public:
  Block(std::uintptr_t base, std::size_t bytes) {
    record_.emplace(base, bytes, DeviceType::CPU, Device(), false);
  }
  LiveRecord& record() { return *record_; }

 private:
  std::optional<LiveRecord> record_;
};

// Books switched on, as the layer's are while it is added.
class TrackedMemoryTest : public ::testing::Test {
 protected:
  TrackedMemoryTest() {
    BiasedMutex::Guard lock(books_.booksLock());
    books_.setLimits(QuarantineLimits{0, 0});  // frees go back at once
    books_.setActive(true);
  }
  const TrackedBlock* liveAt(std::uintptr_t ptr) {
    BiasedMutex::Guard lock(books_.booksLock());
    return books_.live(ptr);
  }
  std::size_t liveCount() {
    BiasedMutex::Guard lock(books_.booksLock());
    std::size_t count = 0;
    books_.forEachLive([&](const TrackedBlock&) { ++count; });
    return count;
  }

  // Holds the free of `block` as the layer does, its token the block.
  TrackedMemory::Free hold(Block& block, TrackedMemory::LetGo& let_go) {
    TrackedBlock first_free;
    return books_.hold(block.record(), nullptr, &block, let_go, first_free);
  }
  void setLimits(std::size_t blocks, std::size_t bytes) {
    books_.setLimits(QuarantineLimits{blocks, bytes});
  }
  // Switches the books off and forgets everything, as the layer's
  // forgetAll does; returns the held frees given back.
  std::vector<const void*> switchOffAndClear() {
    BiasedMutex::Guard lock(books_.booksLock());
    std::vector<const void*> release;
    books_.setActive(false);
    books_.clear(release);
    return release;
  }
  const TrackedBlock* freedAt(std::uintptr_t ptr) {
    BiasedMutex::Guard lock(books_.booksLock());
    return books_.freedBlock(ptr);
  }

  TrackedMemory books_;
};

using Free = TrackedMemory::Free;

TEST_F(TrackedMemoryTest, ThreadsThatMakeAndFreeBlocksAtOnceShareNoLock) {
  if (!BiasedMutex::biasSupported()) {
    GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not available here, "
                    "so no lock is biased and every lock is its inner mutex";
  }
  constexpr int kRounds = 20000;
  BooksLane* lanes[2] = {nullptr, nullptr};
  std::atomic<int> ready{0};
  std::atomic<int> finished{0};
  auto work = [&](int which) {
    // Each thread has its lane before either starts, and keeps it until
    // both are done (an exited thread's lane goes to the next one).
    for (int i = 0; i < kRounds + 1; ++i) {
      if (i == 1) {
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
      }
      Block block(0x100000u * std::uintptr_t(which + 1), 256);
      EXPECT_TRUE(books_.allocated(block.record()));
      lanes[which] = block.record().lane;
      EXPECT_TRUE(books_.forgetLive(block.record()));
    }
    finished.fetch_add(1);
    while (finished.load() < 2) std::this_thread::yield();
  };
  std::thread first(work, 0);
  std::thread second(work, 1);
  first.join();
  second.join();
  ASSERT_NE(lanes[0], nullptr);
  ASSERT_NE(lanes[1], nullptr);
  EXPECT_NE(lanes[0], lanes[1]);
  // One lock for both threads would have been withdrawn from one of them,
  // and a lock once withdrawn stays shared.
  EXPECT_FALSE(lanes[0]->lock.shared());
  EXPECT_FALSE(lanes[1]->lock.shared());
  EXPECT_FALSE(books_.booksLock().shared());
  EXPECT_EQ(liveCount(), 0u);
}

TEST_F(TrackedMemoryTest, ABlockMadeOnOneThreadIsFreedOnAnother) {
  Block block(0x1000, 64);
  std::thread([&] { ASSERT_TRUE(books_.allocated(block.record())); }).join();
  EXPECT_EQ(liveAt(0x1010), &block.record().block);
  EXPECT_TRUE(books_.forgetLive(block.record()));
  EXPECT_FALSE(books_.forgetLive(block.record())) << "it left the books at the first";
  EXPECT_EQ(liveAt(0x1010), nullptr);
}

TEST_F(TrackedMemoryTest, ALookupFindsTheBlocksOfEveryThread) {
  Block first(0x1000, 64);
  Block second(0x2000, 32);
  std::thread([&] { ASSERT_TRUE(books_.allocated(first.record())); }).join();
  std::thread([&] { ASSERT_TRUE(books_.allocated(second.record())); }).join();
  EXPECT_EQ(liveAt(0x1000), &first.record().block);
  EXPECT_EQ(liveAt(0x103f), &first.record().block);
  EXPECT_EQ(liveAt(0x1040), nullptr) << "one past the end belongs to no block";
  EXPECT_EQ(liveAt(0x2004), &second.record().block);
  EXPECT_EQ(liveCount(), 2u);
  // Filed in the index by the lookup, then freed.
  EXPECT_TRUE(books_.forgetLive(first.record()));
  EXPECT_EQ(liveAt(0x1000), nullptr);
  EXPECT_EQ(liveAt(0x2004), &second.record().block);
  EXPECT_TRUE(books_.forgetLive(second.record()));
  EXPECT_EQ(liveCount(), 0u);
}

TEST_F(TrackedMemoryTest, ClearForgetsTheBlocksOfEveryThread) {
  Block waiting(0x1000, 64);
  Block filed(0x2000, 64);
  std::thread([&] { ASSERT_TRUE(books_.allocated(waiting.record())); }).join();
  std::thread([&] { ASSERT_TRUE(books_.allocated(filed.record())); }).join();
  ASSERT_NE(liveAt(0x2000), nullptr);  // files both
  Block late(0x3000, 64);
  ASSERT_TRUE(books_.allocated(late.record()));  // waits on this thread's lane
  EXPECT_TRUE(switchOffAndClear().empty());
  EXPECT_FALSE(books_.forgetLive(waiting.record()));
  EXPECT_FALSE(books_.forgetLive(filed.record()));
  EXPECT_FALSE(books_.forgetLive(late.record()));
  EXPECT_EQ(liveAt(0x1000), nullptr);
  EXPECT_EQ(liveAt(0x3000), nullptr);
  EXPECT_EQ(liveCount(), 0u);
}

TEST_F(TrackedMemoryTest, SwitchedOffTheBooksKeepNoRecord) {
  {
    BiasedMutex::Guard lock(books_.booksLock());
    books_.setActive(false);
  }
  Block block(0x1000, 64);
  EXPECT_FALSE(books_.allocated(block.record()));
  EXPECT_EQ(liveAt(0x1000), nullptr);
}

TEST_F(TrackedMemoryTest, AnExitedThreadsLaneIsTakenOverByTheNextNewThread) {
  Block made_by_first(0x1000, 64);
  Block made_by_next(0x2000, 64);
  std::thread([&] { ASSERT_TRUE(books_.allocated(made_by_first.record())); }).join();
  std::thread([&] { ASSERT_TRUE(books_.allocated(made_by_next.record())); }).join();
  EXPECT_EQ(made_by_first.record().lane, made_by_next.record().lane);
  // The exited thread's block is still in the books.
  EXPECT_EQ(liveAt(0x1000), &made_by_first.record().block);
  EXPECT_TRUE(books_.forgetLive(made_by_first.record()));
  EXPECT_TRUE(books_.forgetLive(made_by_next.record()));
}

// Real threads making blocks, freeing their own and their neighbour's, while
// another looks addresses up: every block is found until freed, and the
// books end empty (run under TSan).
TEST_F(TrackedMemoryTest, ThreadsMakeFreeAndLookUpAtOnce) {
  constexpr int kThreads = 3;
  constexpr int kRounds = 2000;
  std::vector<std::unique_ptr<Block>> handed(kThreads * kRounds);
  std::atomic<int> handed_count[kThreads] = {};
  std::atomic<bool> done{false};
  std::atomic<int> lookups_failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const std::uintptr_t base = 0x10000000u * std::uintptr_t(t + 1) + 0x1000u * i;
        auto own = std::make_unique<Block>(base, 512);
        EXPECT_TRUE(books_.allocated(own->record()));
        if (i % 2 == 0) {
          EXPECT_TRUE(books_.forgetLive(own->record()));
        } else {
          // Left live for the next thread to free, once it is done.
          handed[std::size_t(t) * kRounds + std::size_t(i)] = std::move(own);
          handed_count[t].fetch_add(1, std::memory_order_release);
        }
      }
    });
  }
  std::thread lookups([&] {
    while (!done.load()) {
      // A block of the first thread known to be handed over is live.
      const int count = handed_count[0].load(std::memory_order_acquire);
      if (count > 0) {
        const std::uintptr_t base = 0x10000000u + 0x1000u * std::uintptr_t(2 * count - 1);
        if (liveAt(base + 8) == nullptr) lookups_failed.fetch_add(1);
      }
    }
  });
  for (std::thread& thread : threads) thread.join();
  done.store(true);
  lookups.join();
  EXPECT_EQ(lookups_failed.load(), 0);
  EXPECT_EQ(liveCount(), std::size_t(kThreads * kRounds / 2));
  // Freed on other threads than those that made them.
  std::vector<std::thread> freers;
  for (int t = 0; t < kThreads; ++t) {
    freers.emplace_back([&, t] {
      const int from = (t + 1) % kThreads;
      for (int i = 1; i < kRounds; i += 2) {
        auto& block = handed[std::size_t(from) * kRounds + std::size_t(i)];
        if (block != nullptr) {
          EXPECT_TRUE(books_.forgetLive(block->record()));
        }
      }
    });
  }
  for (std::thread& thread : freers) thread.join();
  EXPECT_EQ(liveCount(), 0u);
}

TEST_F(TrackedMemoryTest, AThreadsQuarantineLetsItsOldestFreeGoPastItsLimits) {
  setLimits(2, 1 << 20);
  Block first(0x1000, 64), second(0x2000, 64), third(0x3000, 64);
  for (Block* block : {&first, &second, &third})
    ASSERT_TRUE(books_.allocated(block->record()));
  TrackedMemory::LetGo let_go;
  EXPECT_EQ(hold(first, let_go), Free::Held);
  EXPECT_EQ(hold(second, let_go), Free::Held);
  EXPECT_EQ(let_go.count, 0u);
  EXPECT_EQ(hold(third, let_go), Free::Held);
  ASSERT_EQ(let_go.count, 1u);
  EXPECT_EQ(let_go.tokens[0], &first) << "the oldest goes first";
  // Bytes bound it too: a block past the bytes pushes the others out, then
  // itself (the caller frees it at once).
  setLimits(1024, 100);
  Block big(0x4000, 200);
  ASSERT_TRUE(books_.allocated(big.record()));
  TrackedMemory::LetGo more;
  EXPECT_EQ(hold(big, more), Free::NotHeld);
  ASSERT_EQ(more.count, 2u);
  EXPECT_EQ(more.tokens[0], &second);
  EXPECT_EQ(more.tokens[1], &third);
}

TEST_F(TrackedMemoryTest, LimitsOfNothingHoldNoFree) {
  setLimits(0, 0);
  Block block(0x1000, 64);
  ASSERT_TRUE(books_.allocated(block.record()));
  TrackedMemory::LetGo let_go;
  EXPECT_EQ(hold(block, let_go), Free::NotHeld);
  EXPECT_EQ(let_go.count, 0u);
  EXPECT_EQ(freedAt(0x1000), nullptr);
}

TEST_F(TrackedMemoryTest, ASecondFreeOfAHeldBlockIsToldApart) {
  setLimits(8, 1 << 20);
  Block block(0x1000, 64);
  ASSERT_TRUE(books_.allocated(block.record()));
  TrackedMemory::LetGo let_go;
  EXPECT_EQ(hold(block, let_go), Free::Held);
  TrackedBlock first_free;
  EXPECT_EQ(books_.hold(block.record(), nullptr, &block, let_go, first_free),
            Free::HeldAlready);
  EXPECT_EQ(first_free.base, 0x1000u);
  EXPECT_EQ(first_free.bytes, 64u);
  EXPECT_FALSE(books_.forgetLive(block.record())) << "a held block is not live";
}

TEST_F(TrackedMemoryTest, AHeldBlockIsFoundByAddressUntilItIsLetGo) {
  setLimits(1, 1 << 20);
  Block first(0x1000, 64), second(0x2000, 64);
  ASSERT_TRUE(books_.allocated(first.record()));
  ASSERT_TRUE(books_.allocated(second.record()));
  TrackedMemory::LetGo let_go;
  std::thread([&] { EXPECT_EQ(hold(first, let_go), Free::Held); }).join();
  EXPECT_EQ(freedAt(0x1020), &first.record().block);  // files it
  EXPECT_EQ(liveAt(0x1020), nullptr);
  EXPECT_EQ(liveAt(0x2020), &second.record().block);
  // Another thread's quarantine: the first stays held.
  TrackedMemory::LetGo mine;
  EXPECT_EQ(hold(second, mine), Free::Held);
  EXPECT_EQ(mine.count, 0u);
  EXPECT_EQ(freedAt(0x1020), &first.record().block);
  EXPECT_EQ(freedAt(0x2000), &second.record().block);
  // The next free on this thread pushes the second out, filed as it is.
  Block third(0x3000, 64);
  ASSERT_TRUE(books_.allocated(third.record()));
  EXPECT_EQ(hold(third, mine), Free::Held);
  ASSERT_EQ(mine.count, 1u);
  EXPECT_EQ(mine.tokens[0], &second);
  EXPECT_EQ(freedAt(0x2000), nullptr);
  EXPECT_EQ(freedAt(0x3000), &third.record().block);
}

TEST_F(TrackedMemoryTest, ClearGivesBackTheFreesEveryThreadHolds) {
  setLimits(8, 1 << 20);
  Block first(0x1000, 64), second(0x2000, 64);
  ASSERT_TRUE(books_.allocated(first.record()));
  ASSERT_TRUE(books_.allocated(second.record()));
  TrackedMemory::LetGo let_go;
  std::thread([&] { EXPECT_EQ(hold(first, let_go), Free::Held); }).join();
  EXPECT_EQ(hold(second, let_go), Free::Held);
  const std::vector<const void*> release = switchOffAndClear();
  EXPECT_EQ(release.size(), 2u);
  EXPECT_NE(std::find(release.begin(), release.end(), &first), release.end());
  EXPECT_NE(std::find(release.begin(), release.end(), &second), release.end());
  EXPECT_EQ(freedAt(0x1000), nullptr);
  EXPECT_EQ(hold(first, let_go), Free::NotLive);
}

}  // namespace
}  // namespace accel::detail
