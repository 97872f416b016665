// kit::CapturedPhilox: a graph's draw per generator, the offsets its fills
// take inside it, and what each replay claims and writes, with slots of
// host memory standing in for device memory.
#include "accel/kit/captured_philox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/philox_generator.h"

namespace accel::kit {
namespace {

// Host words standing in for device slots; the deleter counts the frees
// (the words live as long as this object).
struct HostSlots {
  std::atomic<int> made{0};
  std::atomic<int> freed{0};
  std::vector<std::unique_ptr<std::uint64_t[]>> words;  // one thread allocates

  static void free(void* context) noexcept { ++static_cast<HostSlots*>(context)->freed; }
  std::function<DataPtr()> allocator() {
    return [this] {
      ++made;
      words.push_back(std::make_unique<std::uint64_t[]>(CapturedPhilox::kSlotWords));
      return DataPtr(words.back().get(), this, &HostSlots::free,
                     Device(DeviceType::CPU, 0));
    };
  }
};

// The position each slot holds after a replay.
PhiloxPosition positionIn(const std::uint64_t* slot) { return {slot[0], slot[1]}; }

void writeHost(void* slot, PhiloxPosition from) {
  auto* words = static_cast<std::uint64_t*>(slot);
  words[0] = from.seed;
  words[1] = from.offset;
}

TEST(CapturedPhilox, FillsOfOneGeneratorShareASlotAndTakeConsecutiveOffsets) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  const Generator b = makePhiloxGenerator(Device(DeviceType::CPU, 0), 2);
  EXPECT_TRUE(graph.empty());
  const CapturedPhilox::Position a0 = graph.claim(a, 12, slots.allocator());
  const CapturedPhilox::Position b0 = graph.claim(b, 5, slots.allocator());
  const CapturedPhilox::Position a1 = graph.claim(a, 8, slots.allocator());
  EXPECT_FALSE(graph.empty());
  EXPECT_EQ(slots.made.load(), 2);
  EXPECT_EQ(a0.slot, a1.slot);
  EXPECT_NE(a0.slot, b0.slot);
  EXPECT_EQ(a0.offset, 0u);
  EXPECT_EQ(a1.offset, 12u);
  EXPECT_EQ(b0.offset, 0u);
  EXPECT_EQ(graph.outputs(a), 20u);
  EXPECT_EQ(graph.outputs(b), 5u);
  EXPECT_EQ(graph.outputs(makePhiloxGenerator(Device(DeviceType::CPU, 0))), 0u);
  // Capturing claims nothing from the generators.
  EXPECT_EQ(a.offset(), 0u);
  EXPECT_EQ(b.offset(), 0u);
}

TEST(CapturedPhilox, EachReplayClaimsTheGraphsDrawAndWritesWhereItStarts) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 7);
  a.setOffset(100);  // where the generator stands after the capture
  const CapturedPhilox::Position first = graph.claim(a, 12, slots.allocator());
  (void)graph.claim(a, 8, slots.allocator());
  for (std::uint64_t replay = 0; replay < 3; ++replay) {
    int writes = 0;
    graph.advance([&](void* slot, PhiloxPosition from) {
      ++writes;
      EXPECT_EQ(slot, first.slot);
      writeHost(slot, from);
    });
    EXPECT_EQ(writes, 1);
    EXPECT_EQ(positionIn(first.slot), (PhiloxPosition{7, 100 + replay * 20}));
  }
  EXPECT_EQ(a.offset(), 160u);
}

TEST(CapturedPhilox, ReplaysClaimGeneratorsInTheOrderTheCaptureFirstDrewFrom) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  const Generator b = makePhiloxGenerator(Device(DeviceType::CPU, 0), 2);
  const void* b_slot = graph.claim(b, 4, slots.allocator()).slot;
  const void* a_slot = graph.claim(a, 6, slots.allocator()).slot;
  std::vector<const void*> order;
  graph.advance([&](void* slot, PhiloxPosition from) {
    order.push_back(slot);
    writeHost(slot, from);
  });
  EXPECT_EQ(order, (std::vector<const void*>{b_slot, a_slot}));
  EXPECT_EQ(a.offset(), 6u);
  EXPECT_EQ(b.offset(), 4u);
}

TEST(CapturedPhilox, AllocatesWithoutTheLockSoAnAllocatorMayCallBack) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  const Generator b = makePhiloxGenerator(Device(DeviceType::CPU, 0), 2);
  const std::function<DataPtr()> plain = slots.allocator();
  // An allocator that captures a fill itself (as one that runs observers
  // could): with the lock held this would deadlock.
  const CapturedPhilox::Position a0 = graph.claim(a, 3, [&] {
    EXPECT_EQ(graph.claim(b, 9, plain).offset, 0u);
    return plain();
  });
  EXPECT_EQ(a0.offset, 0u);
  EXPECT_EQ(graph.outputs(a), 3u);
  EXPECT_EQ(graph.outputs(b), 9u);
}

TEST(CapturedPhilox, ConcurrentFirstFillsOfOneGeneratorMakeOneSlotAndFreeTheRest) {
  HostSlots counted;  // its words are not used: threads allocate here
  std::vector<std::uint64_t> storage(CapturedPhilox::kSlotWords * 64);
  std::atomic<std::size_t> next{0};
  const std::function<DataPtr()> allocate = [&] {
    ++counted.made;
    std::uint64_t* words = &storage[next.fetch_add(1) * CapturedPhilox::kSlotWords];
    return DataPtr(words, &counted, &HostSlots::free, Device(DeviceType::CPU, 0));
  };
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  constexpr int kThreads = 8;
  constexpr int kFills = 8;
  {
    CapturedPhilox graph;
    std::vector<std::thread> threads;
    std::vector<const std::uint64_t*> seen(kThreads * kFills);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kFills; ++i) {
          seen[t * kFills + i] = graph.claim(a, 2, allocate).slot;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(graph.outputs(a), 2u * kThreads * kFills);
    for (const std::uint64_t* slot : seen) EXPECT_EQ(slot, seen.front());
    // Every slot made but the kept one went back at once.
    EXPECT_EQ(counted.freed.load(), counted.made.load() - 1);
  }
  EXPECT_EQ(counted.freed.load(), counted.made.load());  // the kept one, with the graph
}

TEST(CapturedPhilox, RefusesAnUndefinedGeneratorAndAnEmptySlot) {
  HostSlots slots;
  CapturedPhilox graph;
  EXPECT_THROW((void)graph.claim(Generator(), 4, slots.allocator()), InvalidArgument);
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  try {
    (void)graph.claim(a, 4, [] { return DataPtr(); });
    FAIL() << "an empty slot was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no memory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(graph.empty());
  EXPECT_EQ(slots.made.load(), 0);
}

TEST(CapturedPhilox, RefusesADrawPastTheEndOfTheStreamAndKeepsTheDraw) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  (void)graph.claim(a, 10, slots.allocator());
  EXPECT_THROW((void)graph.claim(a, UINT64_MAX - 5, slots.allocator()), InvalidArgument);
  EXPECT_EQ(graph.outputs(a), 10u);
  EXPECT_EQ(graph.claim(a, 1, slots.allocator()).offset, 10u);
}

TEST(CapturedPhilox, AWriteThatThrowsPropagatesAndLaterReplaysGoOn) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  const CapturedPhilox::Position at = graph.claim(a, 5, slots.allocator());
  EXPECT_THROW(graph.advance([](void*, PhiloxPosition) {
    throw std::runtime_error("enqueue failed");
  }),
               std::runtime_error);
  EXPECT_EQ(a.offset(), 5u);  // claimed before the write failed
  graph.advance(writeHost);
  EXPECT_EQ(positionIn(at.slot), (PhiloxPosition{1, 5}));
  EXPECT_EQ(a.offset(), 10u);
}

TEST(CapturedPhilox, ReplaysOnManyThreadsClaimDisjointDraws) {
  HostSlots slots;
  CapturedPhilox graph;
  const Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  (void)graph.claim(a, 3, slots.allocator());
  constexpr int kThreads = 4;
  constexpr int kReplays = 50;
  std::vector<std::vector<std::uint64_t>> starts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kReplays; ++i) {
        graph.advance([&](void* slot, PhiloxPosition from) {
          writeHost(slot, from);
          starts[t].push_back(from.offset);
        });
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::uint64_t> all;
  for (const auto& some : starts) all.insert(all.end(), some.begin(), some.end());
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], 3 * i);
  EXPECT_EQ(a.offset(), 3u * kThreads * kReplays);
}

}  // namespace
}  // namespace accel::kit
