// openreg random fills give exactly the host fills' numbers for the same
// (seed, offset), and advance the generator like them.
#include <cmath>

#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "openreg_test_support.h"

namespace {

using openreg_test::OpenRegTest;
using openreg_test::readBack;

using OpenRegFillTest = OpenRegTest;

template <typename T>
std::vector<T> deviceUniform(accel::Stream stream, std::size_t count, T low, T high,
                             accel::Generator generator) {
  accel::DataPtr buffer =
      accel::openreg::allocate(count * sizeof(T), stream.device.index());
  accel::fillUniform(stream, static_cast<T*>(buffer.get()), count, low, high,
                     std::move(generator));
  // readBack copies on the current stream, which need not be `stream`.
  openreg_test::openregHooks().synchronizeStream(stream);
  return readBack<T>(buffer.get(), count);
}

TEST_F(OpenRegFillTest, UniformFloatsMatchTheHostFillBitForBit) {
  const accel::Stream stream = hooks().getCurrentStream(0);
  accel::Generator device_gen = hooks().getNewGenerator(0);
  device_gen.manualSeed(42);
  device_gen.setOffset(12);
  const std::vector<float> device =
      deviceUniform<float>(stream, 1001, -2.0f, 3.0f, device_gen);
  std::vector<float> host(1001);
  accel::fillUniform(std::span<float>(host), -2.0f, 3.0f, accel::PhiloxPosition{42, 12});
  EXPECT_EQ(device, host);
  EXPECT_EQ(device_gen.offset(),
            12u + accel::fillOutputs(accel::FillKind::UniformFloat, 1001));
}

TEST_F(OpenRegFillTest, UniformDoublesMatchTheHostFill) {
  const accel::Stream stream = hooks().getNewStream(1);
  accel::Generator device_gen = hooks().getNewGenerator(1);
  device_gen.manualSeed(7);
  const std::vector<double> device =
      deviceUniform<double>(stream, 333, 0.0, 1.0, device_gen);
  std::vector<double> host(333);
  accel::fillUniform(std::span<double>(host), 0.0, 1.0, accel::PhiloxPosition{7, 0});
  EXPECT_EQ(device, host);
}

TEST_F(OpenRegFillTest, NormalFillsMatchTheHostFillIncludingOddCounts) {
  const accel::Stream stream = hooks().getNewStream(2);
  accel::Generator device_gen = hooks().getNewGenerator(2);
  device_gen.manualSeed(99);
  accel::DataPtr f = accel::openreg::allocate(257 * sizeof(float), 2);
  accel::DataPtr d = accel::openreg::allocate(64 * sizeof(double), 2);
  accel::fillNormal(stream, static_cast<float*>(f.get()), 257, 1.0f, 2.0f, device_gen);
  accel::fillNormal(stream, static_cast<double*>(d.get()), 64, 0.0, 1.0, device_gen);
  hooks().synchronizeStream(stream);

  accel::Generator host_gen =
      accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0), 99);
  std::vector<float> host_f(257);
  std::vector<double> host_d(64);
  accel::fillNormal(std::span<float>(host_f), 1.0f, 2.0f, host_gen);
  accel::fillNormal(std::span<double>(host_d), 0.0, 1.0, host_gen);
  EXPECT_EQ(readBack<float>(f.get(), 257), host_f);
  EXPECT_EQ(readBack<double>(d.get(), 64), host_d);
  EXPECT_EQ(device_gen.offset(), host_gen.offset());
}

TEST_F(OpenRegFillTest,
       DefaultGeneratorIsTheStreamDevicesAndSeedingThroughTheContextRepeats) {
  const accel::Stream stream = hooks().getDefaultStream(3);
  accel::DataPtr buffer = accel::openreg::allocate(100 * sizeof(float), 3);
  auto* data = static_cast<float*>(buffer.get());
  accel::globalContext().manualSeed(42);
  accel::fillUniform(stream, data, 100);
  const std::vector<float> first = readBack<float>(data, 100);
  EXPECT_EQ(hooks().getDefaultGenerator(3).offset(), 100u);
  accel::globalContext().manualSeed(42);
  accel::fillUniform(stream, data, 100);
  EXPECT_EQ(readBack<float>(data, 100), first);
  for (float v : first) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST_F(OpenRegFillTest, BadParametersAreRejectedWithoutConsumingTheGenerator) {
  const accel::Stream stream = hooks().getDefaultStream(4);
  accel::DataPtr buffer = accel::openreg::allocate(16 * sizeof(float), 4);
  auto* data = static_cast<float*>(buffer.get());
  accel::Generator generator = hooks().getNewGenerator(4);
  EXPECT_THROW(accel::fillUniform(stream, data, 16, 1.0f, 1.0f, generator),
               accel::InvalidArgument);
  EXPECT_THROW(accel::fillNormal(stream, data, 16, 0.0f, -1.0f, generator),
               accel::InvalidArgument);
  EXPECT_THROW(accel::fillUniform(stream, data, 17, 0.0f, 1.0f, generator),
               accel::InvalidArgument);  // one element past the allocation
  EXPECT_EQ(generator.offset(), 0u);
  accel::Generator cpu =
      accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0));
  EXPECT_THROW(accel::fillUniform(stream, data, 16, 0.0f, 1.0f, cpu),
               accel::InvalidArgument);
  int host[4];
  EXPECT_THROW(accel::fillUniform(stream, reinterpret_cast<float*>(host), 4, 0.0f, 1.0f,
                                  generator),
               accel::InvalidArgument);
}

TEST_F(OpenRegFillTest, FillsFromOneGeneratorOnTwoStreamsUseDisjointParts) {
  accel::Generator generator = hooks().getNewGenerator(5);
  generator.manualSeed(3);
  const std::vector<float> a =
      deviceUniform<float>(hooks().getNewStream(5), 10, 0.0f, 1.0f, generator);
  const std::vector<float> b =
      deviceUniform<float>(hooks().getNewStream(5), 10, 0.0f, 1.0f, generator);
  std::vector<float> expected(20);
  accel::fillUniform(std::span<float>(expected), 0.0f, 1.0f, accel::PhiloxPosition{3, 0});
  EXPECT_EQ(a, std::vector<float>(expected.begin(), expected.begin() + 10));
  EXPECT_EQ(b, std::vector<float>(expected.begin() + 10, expected.end()));
}

}  // namespace
