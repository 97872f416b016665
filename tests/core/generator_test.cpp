#include "accel/generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace accel
