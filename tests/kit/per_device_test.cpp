// kit::PerDevice (include/accel/kit/per_device.h): one object per index,
// made once, even when threads race to make it; find() never makes one.
#include "accel/kit/per_device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace accel::kit {
namespace {

struct Counted {
  explicit Counted(int tag) : tag(tag) { made.fetch_add(1); }
  int tag;
  static inline std::atomic<int> made{0};
};

// The objects are leaked on purpose, so each table is static, as a backend's
// is: the leak checker then sees them reachable instead of lost.
TEST(PerDevice, GetMakesOneObjectPerIndexAndFindNeverMakesOne) {
  static PerDevice<Counted> table;
  EXPECT_EQ(table.find(3), nullptr);
  Counted& first = table.get(3, 7);
  EXPECT_EQ(first.tag, 7);
  EXPECT_EQ(&table.get(3, 9), &first) << "a second get made another object";
  EXPECT_EQ(table.find(3), &first);
  EXPECT_EQ(table.find(4), nullptr);
  EXPECT_NE(&table.get(kMaxDevicesPerType - 1, 1), &first);
}

TEST(PerDevice, ThreadsRacingForANewIndexAllGetTheSameObject) {
  static PerDevice<Counted> table;
  constexpr int kThreads = 8;
  std::atomic<bool> go{false};
  std::vector<Counted*> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      seen[t] = &table.get(0, t);
    });
  }
  go.store(true);
  for (std::thread& thread : threads) thread.join();
  for (Counted* object : seen) EXPECT_EQ(object, seen[0]);
  EXPECT_EQ(table.find(0), seen[0]);
}

}  // namespace
}  // namespace accel::kit
