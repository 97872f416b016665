// openreg fault injection: the N-th allocation fails, a device is lost after N
// operations, streams get latency; set through the C++ API and the environment.
#include "openreg_test_support.h"

namespace {

using openreg_test::Gate;
using openreg_test::OpenRegTest;

using OpenRegFaultTest = OpenRegTest;

TEST_F(OpenRegFaultTest, TheNthAllocationFailsWithOutOfMemoryAndLaterOnesSucceed) {
  accel::openreg::failNthAllocation(3);
  const std::int64_t ooms = hooks().memoryStats(2).num_ooms;
  accel::DataPtr first = accel::openreg::allocate(64, 2);
  accel::DataPtr second = accel::openreg::allocate(64, 2);
  try {
    (void)accel::openreg::allocate(64, 2);
    FAIL() << "the third allocation succeeded";
  } catch (const accel::OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("fault injection"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(hooks().memoryStats(2).num_ooms, ooms + 1);
  EXPECT_NO_THROW((void)accel::openreg::allocate(64, 2));
}

TEST_F(OpenRegFaultTest, AllocationCountIsSharedByAllDevices) {
  accel::openreg::failNthAllocation(2);
  accel::DataPtr on_zero = accel::openreg::allocate(64, 0);
  EXPECT_THROW((void)accel::openreg::allocate(64, 1), accel::OutOfMemory);
}

TEST_F(OpenRegFaultTest, ZeroCancelsAPendingAllocationFailure) {
  accel::openreg::failNthAllocation(1);
  accel::openreg::failNthAllocation(0);
  EXPECT_NO_THROW((void)accel::openreg::allocate(64, 0));
}

TEST_F(OpenRegFaultTest, DeviceIsLostAfterNOperationsAndStaysLost) {
  accel::DataPtr buffer = accel::openreg::allocate(64, 3);
  const accel::Stream stream = hooks().getNewStream(3);
  accel::openreg::loseDeviceAfter(3, 2);
  int value = 1;
  accel::openreg::copyAsync(buffer.get(), &value, sizeof(int), stream);  // 1
  accel::openreg::copyAsync(buffer.get(), &value, sizeof(int), stream);  // 2
  EXPECT_FALSE(accel::openreg::isDeviceLost(3));
  try {
    accel::openreg::copyAsync(buffer.get(), &value, sizeof(int), stream);  // 3: lost
    FAIL() << "the third operation succeeded";
  } catch (const accel::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("openreg:3 is lost"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(accel::openreg::isDeviceLost(3));
  EXPECT_THROW((void)accel::openreg::allocate(64, 3), accel::DeviceError);
  EXPECT_THROW(hooks().synchronizeStream(stream), accel::DeviceError);
  EXPECT_THROW((void)hooks().queryStream(stream), accel::DeviceError);
  EXPECT_THROW(hooks().deviceSynchronize(3), accel::DeviceError);
  EXPECT_THROW((void)hooks().getDeviceProperties(3), accel::DeviceError);
  EXPECT_THROW(accel::openreg::copy(&value, buffer.get(), sizeof(int)),
               accel::DeviceError);
  // Other devices are unaffected.
  EXPECT_NO_THROW((void)accel::openreg::allocate(64, 4));
  EXPECT_NO_THROW(hooks().deviceSynchronize(4));
}

TEST_F(OpenRegFaultTest, WorkQueuedOnADeviceWhenItIsLostIsDroppedAndWaitersDoNotHang) {
  const accel::Stream stream = hooks().getNewStream(5);
  accel::DataPtr buffer = accel::openreg::allocate(sizeof(int), 5);
  const accel::EventId event = hooks().createEvent(5);
  Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  std::atomic<bool> ran{false};
  accel::openreg::launchKernel(
      stream, "dropped", {},
      [&](const accel::openreg::KernelContext&) { ran.store(true); });
  hooks().recordEvent(event, stream);
  accel::openreg::loseDeviceAfter(5, 0);
  EXPECT_THROW(accel::openreg::launchKernel(stream, "refused", {},
                                            [](const accel::openreg::KernelContext&) {}),
               accel::DeviceError);
  gate.open();
  EXPECT_THROW(hooks().synchronizeEvent(event), accel::DeviceError);
  EXPECT_THROW(hooks().synchronizeStream(stream), accel::DeviceError);
  EXPECT_FALSE(ran.load());
  accel::openreg::clearFaults();
  hooks().destroyEvent(event);
}

TEST_F(OpenRegFaultTest, ClearFaultsBringsALostDeviceBack) {
  accel::openreg::loseDeviceAfter(6, 0);
  EXPECT_THROW((void)accel::openreg::allocate(64, 6), accel::DeviceError);
  accel::openreg::clearFaults();
  EXPECT_FALSE(accel::openreg::isDeviceLost(6));
  accel::DataPtr buffer = accel::openreg::allocate(sizeof(int), 6);
  int value = 5;
  accel::openreg::copy(buffer.get(), &value, sizeof(int));
  EXPECT_EQ(openreg_test::readBack<int>(buffer.get(), 1)[0], 5);
}

// getDeviceAllocator's Allocator goes straight to the core's cache while no
// fault is armed; arming one must still reach a reference taken (and used)
// before, from the next allocation on.
TEST_F(OpenRegFaultTest, FaultsReachAnAllocatorReferenceTakenAndUsedBefore) {
  accel::Allocator& allocator = hooks().getDeviceAllocator(7);
  accel::DataPtr warm = allocator.allocate(64);  // the fast path from now on
  accel::openreg::failNthAllocation(2);
  accel::DataPtr first = allocator.allocate(64);
  EXPECT_THROW((void)allocator.allocate(64), accel::OutOfMemory);
  EXPECT_NO_THROW((void)allocator.allocate(64));
  accel::openreg::loseDeviceAfter(7, 0);
  EXPECT_THROW((void)allocator.allocate(64), accel::DeviceError);
  EXPECT_NO_THROW((void)hooks().getDeviceAllocator(4).allocate(64))
      << "losing device 7 diverted device 4";
  accel::openreg::clearFaults();
  accel::DataPtr after = allocator.allocate(64);
  EXPECT_NE(after.get(), nullptr);
}

TEST_F(OpenRegFaultTest, StreamLatencyDelaysEveryOperationOnThatStream) {
  const accel::Stream slow = hooks().getNewStream(7);
  accel::openreg::setStreamLatency(slow, std::chrono::microseconds(3000));
  const accel::EventFlags timing{.enable_timing = true};
  const accel::EventId start = hooks().createEvent(7, timing);
  const accel::EventId end = hooks().createEvent(7, timing);
  hooks().recordEvent(start, slow);
  hooks().recordEvent(end, slow);
  hooks().synchronizeEvent(end);
  // A lower bound only: the second record waited at least the latency.
  EXPECT_GE(hooks().elapsedTime(start, end), 3.0);
  hooks().destroyEvent(start);
  hooks().destroyEvent(end);
  EXPECT_THROW(accel::openreg::setStreamLatency(slow, std::chrono::microseconds(-1)),
               accel::InvalidArgument);
}

TEST(OpenRegFaultConfigTest, EnvironmentVariablesSetTheFaults) {
  const accel::openreg::Config config =
      accel::openreg::parseConfig([](const char* name) -> const char* {
        const std::string_view var(name);
        if (var == "ACCEL_OPENREG_DEVICES") return "4";
        if (var == "ACCEL_OPENREG_FAIL_ALLOC") return "7";
        if (var == "ACCEL_OPENREG_LOSE_DEVICE") return "1:100,3:0";
        if (var == "ACCEL_OPENREG_STREAM_LATENCY_US") return "250";
        return nullptr;
      });
  EXPECT_EQ(config.fail_allocation, 7u);
  EXPECT_EQ(config.lose_device,
            (std::vector<accel::openreg::DeviceLossRule>{{1, 100}, {3, 0}}));
  EXPECT_EQ(config.stream_latency, std::chrono::microseconds(250));
}

TEST(OpenRegFaultConfigTest, MalformedFaultVariablesAreRejectedByName) {
  const auto parseWith = [](const char* var, const char* value) {
    return [var, value] {
      (void)accel::openreg::parseConfig([var, value](const char* name) -> const char* {
        return std::string_view(name) == var ? value : nullptr;
      });
    };
  };
  for (auto [var, value] : std::vector<std::pair<const char*, const char*>>{
           {"ACCEL_OPENREG_FAIL_ALLOC", "0"},
           {"ACCEL_OPENREG_FAIL_ALLOC", "x"},
           {"ACCEL_OPENREG_LOSE_DEVICE", "1"},
           {"ACCEL_OPENREG_LOSE_DEVICE", "5:1"},  // only 2 devices by default
           {"ACCEL_OPENREG_LOSE_DEVICE", "0:1,"},
           {"ACCEL_OPENREG_STREAM_LATENCY_US", "-3"}}) {
    try {
      parseWith(var, value)();
      ADD_FAILURE() << var << "='" << value << "' was accepted";
    } catch (const accel::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(var), std::string::npos) << e.what();
    }
  }
}

}  // namespace
