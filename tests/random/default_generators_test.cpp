// DefaultGenerators: one generator per device, created on first use, -1 = the
// current device, indices checked.
#include "accel/default_generators.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/philox_generator.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

DeviceType openreg() { return registerDeviceType("openreg"); }

TEST(DefaultGenerators, GetReturnsTheSameGeneratorEveryTime) {
  DefaultGenerators defaults(openreg(), 2, [] { return DeviceIndex{0}; });
  const Generator first = defaults.get(1);
  EXPECT_TRUE(defaults.get(1) == first);
  EXPECT_FALSE(defaults.get(0) == first);
  EXPECT_EQ(first.device(), Device(openreg(), 1));
  EXPECT_EQ(first.currentSeed(), kDefaultSeed);
  EXPECT_NE(first.as<PhiloxGenerator>(), nullptr);
}

TEST(DefaultGenerators, GeneratorsAreImmortalAndOutliveTheirTable) {
  Generator kept;
  {
    DefaultGenerators defaults(openreg(), 1, [] { return DeviceIndex{0}; });
    EXPECT_TRUE(defaults.get(0).isImmortal());
    kept = defaults.get(0);
  }
  kept.manualSeed(3);  // the implementation outlives the table that made it
  EXPECT_EQ(kept.currentSeed(), 3u);
}

TEST(DefaultGenerators, MinusOneMeansTheCurrentDevice) {
  DeviceIndex current = 1;
  DefaultGenerators defaults(openreg(), 2, [&] { return current; });
  EXPECT_TRUE(defaults.get(-1) == defaults.get(1));
  current = 0;
  EXPECT_TRUE(defaults.get() == defaults.get(0));
}

TEST(DefaultGenerators, IndexOutOfRangeThrowsInvalidArgumentNamingTheBackend) {
  DefaultGenerators defaults(openreg(), 2, [] { return DeviceIndex{0}; });
  try {
    (void)defaults.get(5);
    FAIL() << "get(5) succeeded with 2 devices";
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.message(),
                HasSubstr("device index 5 out of range [0, 2) for 'openreg'"));
  }
  EXPECT_THROW((void)defaults.get(2), InvalidArgument);
  EXPECT_THROW((void)defaults.get(-2), InvalidArgument);
}

TEST(DefaultGenerators, CurrentDeviceOutOfRangeThrowsInvalidArgument) {
  DefaultGenerators defaults(openreg(), 1, [] { return DeviceIndex{3}; });
  EXPECT_THROW((void)defaults.get(-1), InvalidArgument);
  DefaultGenerators none(openreg(), 0, [] { return DeviceIndex{0}; });
  EXPECT_THROW((void)none.get(-1), InvalidArgument);
}

TEST(DefaultGenerators, ConstructorRejectsBadDeviceCountOrMissingCallable) {
  EXPECT_THROW(DefaultGenerators(openreg(), -1, [] { return DeviceIndex{0}; }),
               InvalidArgument);
  EXPECT_THROW(
      DefaultGenerators(openreg(), kMaxDevicesPerType + 1, [] { return DeviceIndex{0}; }),
      InvalidArgument);
  EXPECT_THROW(DefaultGenerators(openreg(), 1, nullptr), InvalidArgument);
}

TEST(DefaultGenerators, ForEachCreatedVisitsOnlyCreatedGeneratorsInOrder) {
  DefaultGenerators defaults(openreg(), 4, [] { return DeviceIndex{0}; });
  std::vector<Device> visited;
  defaults.forEachCreated([&](const Generator& gen) { visited.push_back(gen.device()); });
  EXPECT_TRUE(visited.empty());

  (void)defaults.get(3);
  (void)defaults.get(1);
  defaults.forEachCreated([&](const Generator& gen) { visited.push_back(gen.device()); });
  EXPECT_EQ(visited, (std::vector<Device>{Device(openreg(), 1), Device(openreg(), 3)}));
}

TEST(DefaultGenerators, ForEachCreatedCanReseedEveryGenerator) {
  DefaultGenerators defaults(openreg(), 2, [] { return DeviceIndex{0}; });
  (void)defaults.get(0);
  (void)defaults.get(1);
  defaults.get(1).setOffset(50);
  // Reseeding through the visitor; the callback may call back into get().
  defaults.forEachCreated([&](Generator gen) {
    gen.manualSeed(42);
    (void)defaults.get(gen.device().index());
  });
  for (DeviceIndex i : {0, 1}) {
    EXPECT_EQ(defaults.get(i).currentSeed(), 42u);
    EXPECT_EQ(defaults.get(i).offset(), 0u);
  }
}

TEST(DefaultGenerators, FactoryFailureCachesNothingAndIsRetried) {
  int calls = 0;
  DefaultGenerators defaults(
      openreg(), 1, [] { return DeviceIndex{0}; },
      [&](Device device) {
        if (++calls == 1) throw DeviceError("device busy");
        return makePhiloxGenerator(device, 8);
      });
  EXPECT_THROW((void)defaults.get(0), DeviceError);
  int visited = 0;
  defaults.forEachCreated([&](const Generator&) { ++visited; });
  EXPECT_EQ(visited, 0);
  EXPECT_EQ(defaults.get(0).currentSeed(), 8u);
  EXPECT_EQ(calls, 2);
}

TEST(DefaultGenerators, FactoryReturningUndefinedGeneratorIsAnError) {
  DefaultGenerators defaults(
      openreg(), 1, [] { return DeviceIndex{0}; }, [](Device) { return Generator(); });
  EXPECT_THROW((void)defaults.get(0), InvalidArgument);
}

TEST(DefaultGenerators, ConcurrentFirstUseCreatesOneGeneratorPerDevice) {
  std::atomic<int> created{0};
  DefaultGenerators defaults(
      openreg(), 2, [] { return DeviceIndex{1}; },
      [&](Device device) {
        created.fetch_add(1);
        return makePhiloxGenerator(device);
      });
  constexpr int kThreads = 8;
  std::vector<Generator> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) seen[t] = defaults.get(t % 2 == 0 ? -1 : 1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(created.load(), 1);
  for (const Generator& gen : seen) EXPECT_TRUE(gen == seen[0]);
}

}  // namespace
}  // namespace accel
