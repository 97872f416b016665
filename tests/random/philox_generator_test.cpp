// PhiloxGenerator and the Generator handle: seeding, offsets, reserve, state
// blobs, clones.
#include "accel/philox_generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/error.h"
#include "accel/generator.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

const Device kCpu0(DeviceType::CPU, 0);

TEST(PhiloxGenerator, NewGeneratorStartsAtItsSeedAndOffsetZero) {
  Generator gen = makePhiloxGenerator(kCpu0);
  EXPECT_EQ(gen.currentSeed(), kDefaultSeed);
  EXPECT_EQ(gen.initialSeed(), kDefaultSeed);
  EXPECT_EQ(gen.offset(), 0u);
  EXPECT_EQ(gen.device(), kCpu0);
  EXPECT_EQ(gen.impl().engineName(), "philox4x32-10");
  EXPECT_EQ(makePhiloxGenerator(kCpu0, 7).currentSeed(), 7u);
}

TEST(PhiloxGenerator, ManualSeedSetsBothSeedsAndRewindsTheOffset) {
  Generator gen = makePhiloxGenerator(kCpu0);
  gen.setOffset(100);
  gen.manualSeed(42);
  EXPECT_EQ(gen.currentSeed(), 42u);
  EXPECT_EQ(gen.initialSeed(), 42u);
  EXPECT_EQ(gen.offset(), 0u);
}

TEST(PhiloxGenerator, SeedPicksAFreshSeedEachTimeAndRewinds) {
  Generator gen = makePhiloxGenerator(kCpu0);
  gen.setOffset(5);
  const std::uint64_t first = gen.seed();
  EXPECT_EQ(gen.currentSeed(), first);
  EXPECT_EQ(gen.initialSeed(), first);
  EXPECT_EQ(gen.offset(), 0u);
  // Two equal 64-bit draws would mean the source is not random at all.
  EXPECT_NE(gen.seed(), first);
}

TEST(PhiloxGenerator, ReserveReturnsSeedAndOffsetThenAdvances) {
  auto impl = std::make_shared<PhiloxGenerator>(kCpu0, 9);
  impl->setOffset(10);
  EXPECT_EQ(impl->reserve(6), (PhiloxPosition{9, 10}));
  EXPECT_EQ(impl->reserve(0), (PhiloxPosition{9, 16}));
  EXPECT_EQ(impl->reserve(1), (PhiloxPosition{9, 16}));
  EXPECT_EQ(impl->offset(), 17u);
  EXPECT_EQ(reservePhilox(Generator(impl), 3), (PhiloxPosition{9, 17}));
  EXPECT_EQ(impl->offset(), 20u);
}

TEST(PhiloxGenerator, ReservePastTwoToThe64ThrowsAndClaimsNothing) {
  auto impl = std::make_shared<PhiloxGenerator>(kCpu0, 9);
  impl->setOffset(~0ull - 4);
  EXPECT_EQ(impl->reserve(4).offset, ~0ull - 4);
  EXPECT_THROW((void)impl->reserve(1), InvalidArgument);
  EXPECT_EQ(impl->offset(), ~0ull);
  EXPECT_EQ(impl->reserve(0).offset, ~0ull);
}

TEST(PhiloxGenerator, EightThreadsReservingNeverShareAnOutput) {
  auto impl = std::make_shared<PhiloxGenerator>(kCpu0, 1);
  constexpr int kThreads = 8;
  constexpr int kReservesPerThread = 2000;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> claimed(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kReservesPerThread; ++i) {
        const std::uint64_t count = 1 + (i * 7 + t) % 13;
        claimed[t].emplace_back(impl->reserve(count).offset, count);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<std::pair<std::uint64_t, std::uint64_t>> all;
  for (const auto& mine : claimed) all.insert(all.end(), mine.begin(), mine.end());
  std::sort(all.begin(), all.end());
  // Sorted by start, each range must begin exactly where the previous ended:
  // no overlap and no gap, up to the final offset.
  std::uint64_t next = 0;
  for (const auto& [start, count] : all) {
    ASSERT_EQ(start, next);
    next = start + count;
  }
  EXPECT_EQ(next, impl->offset());
}

// A GeneratorImpl that is not a PhiloxGenerator, to reach reservePhilox's
// generic path.
class PlainGenerator final : public GeneratorImpl {
 public:
  PlainGenerator() : GeneratorImpl(kCpu0) {}
  void setCurrentSeed(std::uint64_t seed) override { seed_ = seed, offset_ = 0; }
  std::uint64_t currentSeed() const override { return seed_; }
  std::uint64_t initialSeed() const override { return seed_; }
  std::uint64_t seed() override { return seed_; }
  void setOffset(std::uint64_t offset) override { offset_ = offset; }
  std::uint64_t offset() const override { return offset_; }
  std::vector<std::uint8_t> getState() const override { return {}; }
  void setState(std::span<const std::uint8_t>) override {}
  std::shared_ptr<GeneratorImpl> clone() const override {
    return std::make_shared<PlainGenerator>();
  }
  std::string_view engineName() const noexcept override { return "plain"; }

 private:
  std::uint64_t seed_ = 5;
  std::uint64_t offset_ = 0;
};

TEST(PhiloxGenerator, ReservePhiloxAdvancesAnyGeneratorImpl) {
  Generator gen(std::make_shared<PlainGenerator>());
  gen.setOffset(11);
  EXPECT_EQ(reservePhilox(gen, 4), (PhiloxPosition{5, 11}));
  EXPECT_EQ(gen.offset(), 15u);
  gen.setOffset(~0ull);
  EXPECT_THROW((void)reservePhilox(gen, 1), InvalidArgument);
  EXPECT_EQ(gen.offset(), ~0ull);
}

TEST(PhiloxGenerator, StateBlobHasTheDocumentedLayout) {
  Generator gen = makePhiloxGenerator(kCpu0, 0x1122334455667788ull);
  gen.setOffset(0x0102030405060708ull);
  const std::vector<std::uint8_t> state = gen.getState();
  const std::vector<std::uint8_t> expected = {
      'A',  'P',  'H',  'X',  1,    0,    32,   0,      // magic, version, size
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,   // initial seed
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,   // current seed
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};  // offset
  EXPECT_EQ(state, expected);
}

TEST(PhiloxGenerator, StateRoundTripRestoresSeedsAndOffset) {
  Generator gen = makePhiloxGenerator(kCpu0, 77);
  gen.setOffset(1234);
  const std::vector<std::uint8_t> saved = gen.getState();
  gen.manualSeed(1);
  gen.setOffset(99);
  gen.setState(saved);
  EXPECT_EQ(gen.currentSeed(), 77u);
  EXPECT_EQ(gen.initialSeed(), 77u);
  EXPECT_EQ(gen.offset(), 1234u);
  EXPECT_EQ(gen.getState(), saved);
}

TEST(PhiloxGenerator, StateMovesBetweenDevices) {
  Generator source = makePhiloxGenerator(kCpu0, 31);
  source.setOffset(64);
  Generator target = makePhiloxGenerator(Device(DeviceType::CPU, 1));
  target.setState(source.getState());
  EXPECT_EQ(reservePhilox(target, 4), reservePhilox(source, 4));
  EXPECT_EQ(target.device(), Device(DeviceType::CPU, 1));
}

struct BadBlob {
  std::string name;
  std::vector<std::uint8_t> (*make)(std::vector<std::uint8_t> good);
  std::string mentions;
};

class PhiloxGeneratorBadState : public ::testing::TestWithParam<BadBlob> {};

TEST_P(PhiloxGeneratorBadState, IsRejectedWithInvalidArgumentAndChangesNothing) {
  Generator gen = makePhiloxGenerator(kCpu0, 5);
  gen.setOffset(8);
  const std::vector<std::uint8_t> before = gen.getState();
  Generator other = makePhiloxGenerator(kCpu0, 0xABCDEF);
  other.setOffset(1000);
  const std::vector<std::uint8_t> blob = GetParam().make(other.getState());
  try {
    gen.setState(blob);
    FAIL() << "setState accepted a blob with " << GetParam().name;
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.message(), HasSubstr(GetParam().mentions));
  }
  EXPECT_EQ(gen.getState(), before);
}

std::vector<std::uint8_t> withByte(std::vector<std::uint8_t> blob, std::size_t i,
                                   std::uint8_t value) {
  blob[i] = value;
  return blob;
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, PhiloxGeneratorBadState,
    ::testing::Values(
        BadBlob{"Empty",
                [](std::vector<std::uint8_t>) { return std::vector<std::uint8_t>{}; },
                "0 bytes"},
        BadBlob{"Truncated",
                [](std::vector<std::uint8_t> good) {
                  good.pop_back();
                  return good;
                },
                "31 bytes"},
        BadBlob{"Extended",
                [](std::vector<std::uint8_t> good) {
                  good.push_back(0);
                  return good;
                },
                "33 bytes"},
        BadBlob{"WrongMagic",
                [](std::vector<std::uint8_t> good) { return withByte(good, 0, 'B'); },
                "magic"},
        BadBlob{"VersionZero",
                [](std::vector<std::uint8_t> good) { return withByte(good, 4, 0); },
                "version 0"},
        BadBlob{"FutureVersion",
                [](std::vector<std::uint8_t> good) { return withByte(good, 5, 1); },
                "version 257"},
        BadBlob{"WrongSizeField",
                [](std::vector<std::uint8_t> good) { return withByte(good, 6, 24); },
                "size field"}),
    [](const ::testing::TestParamInfo<BadBlob>& info) { return info.param.name; });

TEST(PhiloxGenerator, CloneCopiesStateThenEvolvesIndependently) {
  Generator original = makePhiloxGenerator(Device(DeviceType::CPU, 3), 12);
  original.setOffset(40);
  Generator copy = original.clone();
  EXPECT_FALSE(copy == original);
  EXPECT_EQ(copy.device(), original.device());
  EXPECT_EQ(copy.getState(), original.getState());

  (void)reservePhilox(original, 100);
  EXPECT_EQ(copy.offset(), 40u);
  copy.manualSeed(99);
  EXPECT_EQ(original.currentSeed(), 12u);
  EXPECT_EQ(original.offset(), 140u);
}

TEST(Generator, CopiesShareOneImplementation) {
  Generator a = makePhiloxGenerator(kCpu0);
  Generator b = a;
  EXPECT_TRUE(a == b);
  b.manualSeed(3);
  EXPECT_EQ(a.currentSeed(), 3u);
  EXPECT_NE(a.as<PhiloxGenerator>(), nullptr);
  EXPECT_EQ(Generator(std::make_shared<PlainGenerator>()).as<PhiloxGenerator>(), nullptr);
}

TEST(Generator, UndefinedGeneratorThrowsInvalidArgument) {
  Generator undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_THROW(undefined.manualSeed(1), InvalidArgument);
  EXPECT_THROW((void)undefined.offset(), InvalidArgument);
  EXPECT_THROW((void)undefined.clone(), InvalidArgument);
  EXPECT_THROW((void)reservePhilox(undefined, 1), InvalidArgument);
}

}  // namespace
}  // namespace accel
