// openreg with many threads and devices at once: each device's memory,
// streams and accounting are its own.
#include <barrier>

#include "openreg_test_support.h"

namespace {

using openreg_test::kTestDevices;
using openreg_test::OpenRegTest;
using openreg_test::readBack;

using OpenRegThreadsTest = OpenRegTest;

TEST_F(OpenRegThreadsTest, EightThreadsUseEightDevicesAtOnce) {
  constexpr std::size_t kCount = 4096;
  constexpr int kRounds = 8;
  std::barrier start(kTestDevices);
  std::vector<std::string> failures(kTestDevices);
  std::vector<std::thread> threads;
  for (int d = 0; d < kTestDevices; ++d) {
    threads.emplace_back([&, d] {
      try {
        accel::DeviceGuard guard(openreg_test::device(d));
        const auto index = static_cast<accel::DeviceIndex>(d);
        const accel::Stream stream = hooks().getNewStream(index);
        accel::StreamGuard stream_guard(stream);
        accel::DataPtr buffer = accel::openreg::allocate(kCount * sizeof(int));
        std::vector<int> host(kCount, d);
        start.arrive_and_wait();
        for (int round = 0; round < kRounds; ++round) {
          accel::openreg::copyAsync(buffer.get(), host.data(), kCount * sizeof(int),
                                    stream);
          accel::openreg::launchKernel(stream, "add",
                                       {{"x", buffer.get(), kCount * sizeof(int)}},
                                       [round](const accel::openreg::KernelContext& k) {
                                         for (int& v : k.buffer<int>("x")) v += round;
                                       });
          const accel::EventId event = hooks().createEvent(index);
          hooks().recordEvent(event, stream);
          hooks().synchronizeEvent(event);
          hooks().destroyEvent(event);
          std::vector<int> back = readBack<int>(buffer.get(), kCount);
          if (back != std::vector<int>(kCount, d + round)) {
            failures[d] = "wrong values in round " + std::to_string(round);
            return;
          }
        }
        if (hooks().getCurrentDevice() != index) failures[d] = "current device changed";
      } catch (const std::exception& e) {
        failures[d] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int d = 0; d < kTestDevices; ++d) EXPECT_EQ(failures[d], "") << "device " << d;
}

TEST_F(OpenRegThreadsTest, AllocationsOnOneDeviceDoNotShowInAnothersStats) {
  const accel::MemoryStats before_zero = hooks().memoryStats(0);
  const accel::MemoryStats before_one = hooks().memoryStats(1);
  accel::DataPtr a = accel::openreg::allocate(std::size_t{1} << 20, 1);
  EXPECT_EQ(hooks().memoryStats(0).allocated_bytes.current,
            before_zero.allocated_bytes.current);
  EXPECT_EQ(
      hooks().memoryStats(1).allocated_bytes.current - before_one.allocated_bytes.current,
      std::int64_t{1} << 20);
}

TEST_F(OpenRegThreadsTest, DevicesHaveDisjointAddressRanges) {
  std::vector<accel::DataPtr> buffers;
  for (int d = 0; d < kTestDevices; ++d) {
    buffers.push_back(accel::openreg::allocate(std::size_t{64} << 20,
                                               static_cast<accel::DeviceIndex>(d)));
  }
  for (int d = 0; d < kTestDevices; ++d) {
    const char* begin = static_cast<const char*>(buffers[d].get());
    EXPECT_EQ(hooks().getDeviceFromPtr(begin), openreg_test::device(d));
    EXPECT_EQ(hooks().getDeviceFromPtr(begin + (std::size_t{64} << 20) - 1),
              openreg_test::device(d));
  }
}

TEST_F(OpenRegThreadsTest, ConcurrentAllocationsAndFreesKeepExactAccounting) {
  const accel::MemoryStats before = hooks().memoryStats(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) {
        accel::DataPtr a =
            accel::openreg::allocate(static_cast<std::size_t>(1 + i * 37), 2);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const accel::MemoryStats after = hooks().memoryStats(2);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.allocations.current, before.allocations.current);
  EXPECT_EQ(after.requested_bytes.current, before.requested_bytes.current);
  EXPECT_EQ(after.allocations.allocated - before.allocations.allocated, 800);
  EXPECT_EQ(after.allocations.freed - before.allocations.freed, 800);
  // At most 4 blocks of under 8 KiB live at once: one cached 2 MiB segment
  // of the small pool and one of the 512 B uniform pool serve all 800 (none
  // if they were already cached).
  EXPECT_LE(after.num_device_alloc - before.num_device_alloc, 2);
}

}  // namespace
