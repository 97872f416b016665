#include "accel/generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "accel/error.h"
#include "accel/philox_generator.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

TEST(GeneratorTest, UndefinedGeneratorThrowsOnUse) {
  Generator undefined;
  EXPECT_FALSE(undefined.defined());
  try {
    (void)undefined.currentSeed();
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("undefined (default-constructed) Generator"));
  }
  EXPECT_THROW(undefined.manualSeed(1), InvalidArgument);
  EXPECT_THROW((void)undefined.clone(), InvalidArgument);
  EXPECT_EQ(undefined.as<PhiloxGenerator>(), nullptr);
}

TEST(GeneratorTest, CopiesShareStateAndClonesDoNot) {
  Generator a = makePhiloxGenerator(Device(DeviceType::CUDA, 1), 5);
  Generator copy = a;
  Generator clone = a.clone();
  EXPECT_EQ(copy, a);
  EXPECT_NE(clone, a);
  copy.manualSeed(11);
  copy.setOffset(8);
  EXPECT_EQ(a.currentSeed(), 11u);
  EXPECT_EQ(a.offset(), 8u);
  EXPECT_EQ(clone.currentSeed(), 5u);
  EXPECT_EQ(clone.device(), Device(DeviceType::CUDA, 1));
}

TEST(GeneratorTest, StateRoundTripsBetweenGenerators) {
  Generator a = makePhiloxGenerator(Device(DeviceType::CPU, 0), 3);
  a.setOffset(40);
  Generator b = makePhiloxGenerator(Device(DeviceType::CUDA, 0));
  b.setState(a.getState());
  EXPECT_EQ(b.currentSeed(), 3u);
  EXPECT_EQ(b.offset(), 40u);
  EXPECT_EQ(b.device(), Device(DeviceType::CUDA, 0));  // the state does not move devices
}

TEST(GeneratorTest, ImmortalCopiesShareStateAndCountNoReferences) {
  std::weak_ptr<GeneratorImpl> watch;
  Generator immortal;
  {
    auto impl = std::make_shared<PhiloxGenerator>(Device(DeviceType::CPU, 0), 7);
    watch = impl;
    Generator mortal(std::move(impl));
    EXPECT_FALSE(mortal.isImmortal());
    immortal = Generator::immortal(mortal);
    EXPECT_EQ(watch.use_count(), 2);  // the mortal handle and the process's keep
  }
  EXPECT_TRUE(immortal.isImmortal());
  const long kept = watch.use_count();
  EXPECT_EQ(kept, 1);  // only the process keeps it now
  {
    Generator copy = immortal;
    Generator another = copy;
    EXPECT_TRUE(another.isImmortal());
    EXPECT_EQ(watch.use_count(), kept)
        << "copying an immortal handle counted a reference";
    another.manualSeed(21);
  }
  EXPECT_EQ(immortal.currentSeed(), 21u);
  EXPECT_EQ(Generator::immortal(immortal), immortal);  // already immortal
  EXPECT_FALSE(Generator::immortal(Generator()).defined());
}

TEST(GeneratorTest, MovedFromGeneratorIsUndefined) {
  Generator a = Generator::immortal(makePhiloxGenerator(Device(DeviceType::CPU, 0), 1));
  Generator b = std::move(a);
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): what is pinned down
  EXPECT_FALSE(a.isImmortal());
  EXPECT_TRUE(b.isImmortal());
  Generator c = makePhiloxGenerator(Device(DeviceType::CPU, 0), 2);
  c = std::move(b);
  EXPECT_FALSE(b.defined());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.currentSeed(), 1u);
}

}  // namespace
}  // namespace accel
