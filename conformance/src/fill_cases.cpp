// The fill group: a device fill writes, bit for bit, what the host fill of
// accel/random_fill.h writes from the same (seed, offset), for every kind and
// for sizes 1, odd and several pages; it moves the generator by exactly the
// outputs it consumed, in call order; the default generator is the stream's
// device's; and the refusals (bad parameters, null or foreign data, a range
// past its allocation, another device's stream or generator) consume nothing.
//
// Results are read back through the copies group (a device need not be
// host-addressable): a backend that declares fill declares copies too.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "accel/random_fill.h"
#include "conformance_case.h"
#include "copies_support.h"

namespace accel::conformance::detail {
namespace fill_cases {
namespace {

constexpr std::size_t kCounts[] = {1, 7, 4099};
constexpr std::uint64_t kSeed = 0x5eedf111;
constexpr std::uint64_t kOffset = 12;

struct KindCase {
  DeviceFill kind;
  double a;
  double b;
};
constexpr KindCase kKinds[] = {
    {DeviceFill::Bits32, 0, 0},        {DeviceFill::Bits64, 0, 0},
    {DeviceFill::UniformFloat, -2, 3}, {DeviceFill::UniformDouble, 0, 1},
    {DeviceFill::NormalFloat, 1, 2},   {DeviceFill::NormalDouble, -1, 0.5},
    {DeviceFill::BernoulliU8, 0.3, 0}, {DeviceFill::BernoulliFloat, 0.7, 0},
};

template <typename T>
std::span<T> as(std::vector<unsigned char>& bytes) {
  return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
}

// A new generator of device `index` at (kSeed, kOffset).
Generator placedGenerator(AcceleratorHooks& hooks, int index) {
  Generator g = hooks.getNewGenerator(DeviceIndex(index));
  g.manualSeed(kSeed);
  g.setOffset(kOffset);
  return g;
}

void fillsMatchTheHostFillBitForBit(AcceleratorHooks& hooks) {
  for (int i = 0; i < hooks.deviceCount(); ++i) {
    const Stream stream = hooks.getCurrentStream(DeviceIndex(i));
    for (const KindCase& k : kKinds) {
      for (std::size_t count : kCounts) {
        const std::size_t bytes = count * deviceFillElementBytes(k.kind);
        DataPtr device = deviceMemory(hooks, i, bytes);
        const Generator g = placedGenerator(hooks, i);
        hooks.fillRandom(stream, k.kind, device.get(), count, k.a, k.b, g);
        EXPECT_EQ(g.offset(), kOffset + deviceFillOutputs(k.kind, count))
            << deviceFillApiName(k.kind) << " of " << count << " elements of "
            << deviceFillElementBytes(k.kind)
            << " bytes moved the generator by another amount than it consumes";
        const std::vector<unsigned char> back =
            readBack(hooks, device.get(), bytes, stream);
        std::vector<unsigned char> expected(bytes);
        fillHostReference(k.kind, expected.data(), count, k.a, k.b,
                          PhiloxPosition{kSeed, kOffset});
        EXPECT_EQ(firstDifference(back.data(), expected.data(), bytes), -1)
            << hookName(HookId::fillRandom) << " (" << deviceFillApiName(k.kind)
            << ", kind " << static_cast<int>(k.kind) << ") of " << count
            << " elements on device " << i
            << " differs from the host fill from the same seed and offset at that "
               "byte (-1: none)";
      }
    }
  }
}

void fillsFromOneGeneratorFollowEachOther(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  constexpr std::size_t kHalf = 1000;
  DataPtr device = deviceMemory(hooks, 0, 2 * kHalf * sizeof(float));
  auto* data = static_cast<float*>(device.get());
  const Generator g = placedGenerator(hooks, 0);
  hooks.fillRandom(stream, DeviceFill::UniformFloat, data, kHalf, 0, 1, g);
  hooks.fillRandom(stream, DeviceFill::UniformFloat, data + kHalf, kHalf, 0, 1, g);
  std::vector<unsigned char> expected(2 * kHalf * sizeof(float));
  fillUniform(as<float>(expected), PhiloxPosition{kSeed, kOffset});
  const std::vector<unsigned char> back =
      readBack(hooks, device.get(), expected.size(), stream);
  EXPECT_EQ(firstDifference(back.data(), expected.data(), expected.size()), -1)
      << "two fills of " << kHalf
      << " floats from one generator are not one host fill of " << 2 * kHalf
      << ": the second did not start where the first ended";
}

void defaultGeneratorIsTheStreamsDevices(AcceleratorHooks& hooks) {
  const int last = hooks.deviceCount() - 1;
  const Stream stream = hooks.getCurrentStream(DeviceIndex(last));
  const Generator& g = hooks.getDefaultGenerator(DeviceIndex(last));
  g.manualSeed(kSeed);
  const std::uint64_t offset = g.offset();
  constexpr std::size_t kCount = 257;
  DataPtr device = deviceMemory(hooks, last, kCount * sizeof(std::uint32_t));
  hooks.fillRandom(stream, DeviceFill::Bits32, device.get(), kCount, 0, 0);
  EXPECT_EQ(g.offset(), offset + kCount)
      << hookName(HookId::fillRandom) << " without a generator on device " << last
      << " did not draw from that device's default generator";
  std::vector<unsigned char> expected(kCount * sizeof(std::uint32_t));
  fillBits(as<std::uint32_t>(expected), PhiloxPosition{kSeed, offset});
  const std::vector<unsigned char> back =
      readBack(hooks, device.get(), expected.size(), stream);
  EXPECT_EQ(firstDifference(back.data(), expected.data(), expected.size()), -1);
}

void refusalsConsumeNothing(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  constexpr std::size_t kCount = 64;
  DataPtr device = deviceMemory(hooks, 0, kCount * sizeof(float));
  auto* data = static_cast<float*>(device.get());
  const Generator g = placedGenerator(hooks, 0);
  const std::string hook(hookName(HookId::fillRandom));
  auto refused = [&](const char* what, auto call) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(call, {}))
        << hook << " with " << what << " was not refused with InvalidArgument";
    EXPECT_EQ(g.offset(), kOffset) << hook << " with " << what << " moved the generator";
  };
  refused("low >= high", [&] {
    hooks.fillRandom(stream, DeviceFill::UniformFloat, data, kCount, 1, 1, g);
  });
  refused("a negative stddev", [&] {
    hooks.fillRandom(stream, DeviceFill::NormalFloat, data, kCount, 0, -1, g);
  });
  refused("p > 1", [&] {
    hooks.fillRandom(stream, DeviceFill::BernoulliFloat, data, kCount, 1.5, 0, g);
  });
  refused("null data", [&] {
    hooks.fillRandom(stream, DeviceFill::UniformFloat, nullptr, kCount, 0, 1, g);
  });
  refused("a range past the end of its allocation", [&] {
    hooks.fillRandom(stream, DeviceFill::UniformFloat, data + 1, kCount, 0, 1, g);
  });
  std::vector<float> host(kCount);
  refused("host memory as the data", [&] {
    hooks.fillRandom(stream, DeviceFill::UniformFloat, host.data(), kCount, 0, 1, g);
  });
  refused("a stream of another device type", [&] {
    hooks.fillRandom(Stream(Device(DeviceType::CPU, 0), kDefaultStreamId),
                     DeviceFill::UniformFloat, data, kCount, 0, 1, g);
  });
  // A count of 0 checks and writes nothing.
  hooks.fillRandom(stream, DeviceFill::UniformFloat, nullptr, 0, 0, 1, g);
  EXPECT_EQ(g.offset(), kOffset) << hook << " of 0 elements moved the generator";
}

void streamOfAnotherDeviceIsRefused(AcceleratorHooks& hooks) {
  if (hooks.deviceCount() < 2) {
    GTEST_SKIP() << "a stream of another device of '" << hooks.name()
                 << "' needs two devices; this backend has one";
  }
  constexpr std::size_t kCount = 64;
  DataPtr device = deviceMemory(hooks, 0, kCount * sizeof(float));
  const Generator g = placedGenerator(hooks, 0);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] {
        hooks.fillRandom(hooks.getCurrentStream(1), DeviceFill::UniformFloat,
                         device.get(), kCount, 0, 1, g);
      },
      {"memory of"}))
      << hookName(HookId::fillRandom) << " of device 0's memory on a stream of device 1";
  EXPECT_EQ(g.offset(), kOffset) << "a refused fill moved the generator";
}

}  // namespace
}  // namespace fill_cases

std::vector<ConformanceCase> fillCases() {
  using namespace fill_cases;
  using enum HookId;
  return {
      deviceCase("FillsMatchTheHostFillBitForBit", fillsMatchTheHostFillBitForBit,
                 {fillRandom, copyDeviceToHost, getDeviceAllocator, getNewGenerator}),
      deviceCase("FillsFromOneGeneratorFollowEachOther",
                 fillsFromOneGeneratorFollowEachOther,
                 {fillRandom, copyDeviceToHost, getNewGenerator}),
      deviceCase("DefaultGeneratorIsTheStreamsDevices",
                 defaultGeneratorIsTheStreamsDevices,
                 {fillRandom, copyDeviceToHost, getDefaultGenerator}),
      deviceCase("RefusalsConsumeNothing", refusalsConsumeNothing,
                 {fillRandom, getDeviceAllocator, getNewGenerator}),
      deviceCase("FillOnAStreamOfAnotherDeviceIsRefused", streamOfAnotherDeviceIsRefused,
                 {fillRandom, getCurrentStream, getDeviceAllocator}),
  };
}

}  // namespace accel::conformance::detail
