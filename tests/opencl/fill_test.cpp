// Random fills on the OpenCL device: bit-identical to the host fills for
// every element type, size (one and many work-groups, partial chunks), seed
// and offset; concurrent fills from several threads, each with its own
// kernels.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "accel/device_fill.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "opencl_test_support.h"
#include "support/error_of.h"

namespace accel::opencl::testing {
namespace {

using FillTest = OpenClTest;

// Copies `count` elements from device memory (blocking on `stream`).
template <typename T>
std::vector<T> readBack(Stream stream, const void* data, std::size_t count) {
  std::vector<T> host(count);
  if (count == 0) return host;
  EXPECT_EQ(clEnqueueSVMMemcpy(nativeQueue(stream), CL_TRUE, host.data(), data,
                               count * sizeof(T), 0, nullptr, nullptr),
            CL_SUCCESS);
  return host;
}

// Sizes: empty, one element, partial chunks, one work-group, many; and
// around the 64 words of a vectorised work-item (fill_lanes.cl), where the
// offsets below move the first whole one (61 + 3 = 64).
constexpr std::size_t kSizes[] = {0,  1,  7,  15,  16,   17,   61,
                                  63, 64, 65, 128, 1023, 1025, 100'003};
constexpr std::uint64_t kSeeds[] = {0, 42, 0xFFFFFFFFFFFFFFFFull};
// The last offset puts Philox blocks 2^32 - 8 .. 2^32 + 7 in the second
// vectorised work-item: the counters' high word differs across its lanes.
constexpr std::uint64_t kOffsets[] = {0, 3, (1ull << 32) + 5, (1ull << 34) - 94};

// Runs `device_fill(stream, ptr, n, generator)` and `host_fill(span,
// generator)` from generators at the same (seed, offset); expects equal bits.
template <typename T, typename DeviceFill, typename HostFill>
void expectBitIdentical(AcceleratorHooks& hooks, DeviceFill device_fill,
                        HostFill host_fill) {
  const Stream stream = hooks.getCurrentStream(0);
  for (std::size_t n : kSizes) {
    for (std::uint64_t seed : kSeeds) {
      for (std::uint64_t offset : kOffsets) {
        Generator device_gen = makePhiloxGenerator(Device(deviceType(), 0));
        device_gen.manualSeed(seed);
        device_gen.setOffset(offset);
        Generator host_gen = makePhiloxGenerator(Device(DeviceType::CPU, 0));
        host_gen.manualSeed(seed);
        host_gen.setOffset(offset);
        DataPtr data = hooks.getDeviceAllocator(0).allocate(n * sizeof(T) + 1);
        device_fill(stream, static_cast<T*>(data.get()), n, device_gen);
        const std::vector<T> got = readBack<T>(stream, data.get(), n);
        std::vector<T> want(n);
        host_fill(std::span<T>(want), host_gen);
        // (memcmp of 0 bytes still needs valid pointers: an empty vector has none.)
        ASSERT_TRUE(n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0)
            << "n=" << n << " seed=" << seed << " offset=" << offset;
        EXPECT_EQ(device_gen.offset(), host_gen.offset());
      }
    }
  }
}

TEST_F(FillTest, BitsMatchTheHost) {
  expectBitIdentical<std::uint32_t>(
      hooks(),
      [](Stream s, std::uint32_t* p, std::size_t n, Generator g) {
        accel::fillBits(s, p, n, g);
      },
      [](std::span<std::uint32_t> out, Generator g) { accel::fillBits(out, g); });
  expectBitIdentical<std::uint64_t>(
      hooks(),
      [](Stream s, std::uint64_t* p, std::size_t n, Generator g) {
        accel::fillBits(s, p, n, g);
      },
      [](std::span<std::uint64_t> out, Generator g) { accel::fillBits(out, g); });
}

TEST_F(FillTest, UniformMatchesTheHost) {
  expectBitIdentical<float>(
      hooks(),
      [](Stream s, float* p, std::size_t n, Generator g) {
        accel::fillUniform(s, p, n, 0.0f, 1.0f, g);
      },
      [](std::span<float> out, Generator g) { accel::fillUniform(out, g); });
  expectBitIdentical<float>(
      hooks(),
      [](Stream s, float* p, std::size_t n, Generator g) {
        accel::fillUniform(s, p, n, -3.0f, 5.5f, g);
      },
      [](std::span<float> out, Generator g) { accel::fillUniform(out, -3.0f, 5.5f, g); });
  if (!deviceInfo(0).fp64) GTEST_SKIP() << "no cl_khr_fp64: double fills are refused";
  expectBitIdentical<double>(
      hooks(),
      [](Stream s, double* p, std::size_t n, Generator g) {
        accel::fillUniform(s, p, n, 0.0, 1.0, g);
      },
      [](std::span<double> out, Generator g) { accel::fillUniform(out, g); });
  expectBitIdentical<double>(
      hooks(),
      [](Stream s, double* p, std::size_t n, Generator g) {
        accel::fillUniform(s, p, n, -1e3, 7.25, g);
      },
      [](std::span<double> out, Generator g) { accel::fillUniform(out, -1e3, 7.25, g); });
}

TEST_F(FillTest, NormalMatchesTheHost) {
  expectBitIdentical<float>(
      hooks(),
      [](Stream s, float* p, std::size_t n, Generator g) {
        accel::fillNormal(s, p, n, 0.5f, 2.0f, g);
      },
      [](std::span<float> out, Generator g) { accel::fillNormal(out, 0.5f, 2.0f, g); });
  if (!deviceInfo(0).fp64) GTEST_SKIP() << "no cl_khr_fp64: double fills are refused";
  expectBitIdentical<double>(
      hooks(),
      [](Stream s, double* p, std::size_t n, Generator g) {
        accel::fillNormal(s, p, n, -1.0, 3.0, g);
      },
      [](std::span<double> out, Generator g) { accel::fillNormal(out, -1.0, 3.0, g); });
}

TEST_F(FillTest, BernoulliMatchesTheHost) {
  expectBitIdentical<std::uint8_t>(
      hooks(),
      [](Stream s, std::uint8_t* p, std::size_t n, Generator g) {
        accel::fillBernoulli(s, p, n, 0.3, g);
      },
      [](std::span<std::uint8_t> out, Generator g) {
        accel::fillBernoulli(out, 0.3, g);
      });
  expectBitIdentical<float>(
      hooks(),
      [](Stream s, float* p, std::size_t n, Generator g) {
        accel::fillBernoulli(s, p, n, 0.75, g);
      },
      [](std::span<float> out, Generator g) { accel::fillBernoulli(out, 0.75, g); });
}

TEST_F(FillTest, ThreadsFillConcurrentlyWithTheirOwnKernels) {
  constexpr int kThreads = 4;
  constexpr std::size_t kCount = 20'000;
  std::vector<DataPtr> buffers;
  for (int t = 0; t < kThreads; ++t) {
    buffers.push_back(hooks().getDeviceAllocator(0).allocate(kCount * sizeof(float)));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Generator g = makePhiloxGenerator(Device(deviceType(), 0));
      g.manualSeed(static_cast<std::uint64_t>(t));
      const Stream stream = hooks().getNewStream(0);
      for (int round = 0; round < 5; ++round) {
        accel::fillNormal(stream, static_cast<float*>(buffers[t].get()), kCount, 0.0f,
                          1.0f, g);
      }
      hooks().synchronizeStream(stream);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    Generator g = makePhiloxGenerator(Device(DeviceType::CPU, 0));
    g.manualSeed(static_cast<std::uint64_t>(t));
    g.setOffset(4 * fillOutputs(FillKind::NormalFloat, kCount));  // the fifth round
    std::vector<float> want(kCount);
    accel::fillNormal(std::span<float>(want), 0.0f, 1.0f, g);
    const std::vector<float> got =
        readBack<float>(hooks().getDefaultStream(0), buffers[t].get(), kCount);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), kCount * sizeof(float)), 0) << t;
  }
}

TEST_F(FillTest, BadOutputsAndParametersAreRefusedBeforeConsuming) {
  Generator g = makePhiloxGenerator(Device(deviceType(), 0));
  const Stream stream = hooks().getDefaultStream(0);
  std::vector<float> host(16);
  EXPECT_THROW(accel::fillUniform(stream, host.data(), host.size(), 0.0f, 1.0f, g),
               InvalidArgument);  // not device memory
  DataPtr small = hooks().getDeviceAllocator(0).allocate(8 * sizeof(float));
  EXPECT_THROW(accel::fillUniform(stream, static_cast<float*>(small.get()), 1 << 20, 0.0f,
                                  1.0f, g),
               InvalidArgument);  // past the allocation's end
  EXPECT_THROW(
      accel::fillUniform(stream, static_cast<float*>(small.get()), 8, 2.0f, 1.0f, g),
      InvalidArgument);  // low >= high
  EXPECT_EQ(g.offset(), 0u);
  // The one fill API goes to the hooks of the stream's device type: a cpu
  // stream never reaches opencl's fill, and is refused as a host stream.
  EXPECT_THROW(accel::fillBits(Stream(Device(DeviceType::CPU, 0), 0),
                               static_cast<std::uint32_t*>(small.get()), 8, g),
               InvalidArgument);
  EXPECT_EQ(g.offset(), 0u);
}

// A generator belongs to its device type: drawing from another backend's
// would advance that backend's sequence.
TEST_F(FillTest, AGeneratorOfAnotherDeviceTypeIsRefusedAndNotAdvanced) {
  Generator cpu = makePhiloxGenerator(Device(DeviceType::CPU, 0));
  const Stream stream = hooks().getDefaultStream(0);
  DataPtr data = hooks().getDeviceAllocator(0).allocate(8 * sizeof(float));
  const std::string message = accel::testing::errorOf<InvalidArgument>([&] {
    accel::fillUniform(stream, static_cast<float*>(data.get()), 8, 0.0f, 1.0f, cpu);
  });
  EXPECT_NE(message.find("the generator is on cpu:0; a fill on opencl:0 needs a "
                         "generator of opencl"),
            std::string::npos)
      << message;
  EXPECT_EQ(cpu.offset(), 0u);
}

}  // namespace
}  // namespace accel::opencl::testing
