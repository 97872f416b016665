// The driver probe and the context-free hooks against a fake libcuda.so.1
// (fake_driver.cpp), one process per case (the probe runs once per process):
// ctest runs this program with LD_LIBRARY_PATH pointing at the fake and the
// fake's settings. Run by hand without them, it skips.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "accel/accel.h"
#include "accel/plugin.h"

namespace {

accel::AcceleratorHooks& loadCuda() {
  (void)accel::loadBackend(ACCEL_CUDA_PLUGIN_PATH);
  return accel::getHooks(accel::DeviceType::CUDA);
}

// Calls the fake made to functions that create or switch contexts, or that
// the CUDA runtime uses to start; -1 if the fake is not the driver loaded.
int forbiddenDriverCalls() {
  void* fake = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (fake == nullptr) return -1;
  auto calls = reinterpret_cast<int (*)()>(dlsym(fake, "fake_cuda_forbidden_calls"));
  return calls != nullptr ? calls() : -1;
}

TEST(CudaFakeDriver, ProbeReportsTheDriversProblem) {
  const char* expected = std::getenv("EXPECTED_REASON");
  if (expected == nullptr)
    GTEST_SKIP() << "run through ctest (needs the fake driver's setup)";
  accel::AcceleratorHooks& cuda = loadCuda();
  EXPECT_FALSE(cuda.isAvailable());
  EXPECT_EQ(cuda.deviceCount(), 0);
  EXPECT_FALSE(cuda.hasPrimaryContext(0));
  EXPECT_NO_THROW(cuda.init());  // succeeds without devices: deviceCount() says 0
  try {
    (void)cuda.getCurrentDevice();
    FAIL() << "the current device was read on a fake driver without devices";
  } catch (const accel::NotAvailable& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("libcuda.so.1 not found"), std::string::npos)
        << "the fake driver was not loaded: " << e.what();
  }
}

// With two (fake) devices and no context anywhere: the probes, the current
// device and the pointer queries answer from the driver alone and never
// reach a function that creates or switches a context.
TEST(CudaFakeDriver, DeviceQueriesCreateNoContext) {
  if (std::getenv("FAKE_CUDA_DEVICES") == nullptr) {
    GTEST_SKIP() << "run through ctest (needs the fake driver's setup)";
  }
  accel::AcceleratorHooks& cuda = loadCuda();
  ASSERT_TRUE(cuda.isAvailable());
  ASSERT_EQ(cuda.deviceCount(), 2);
  EXPECT_EQ(forbiddenDriverCalls(), 0);

  EXPECT_FALSE(cuda.hasPrimaryContext(0));
  EXPECT_FALSE(cuda.hasPrimaryContext(1));
  EXPECT_EQ(cuda.getCurrentDevice(), 0);  // no target, no context: device 0
  cuda.setCurrentDevice(1);               // no context on 1: a target only
  EXPECT_EQ(cuda.getCurrentDevice(), 1);
  EXPECT_EQ(cuda.exchangeDevice(0), 1);
  EXPECT_EQ(cuda.getCurrentDevice(), 0);
  {
    accel::DeviceGuard guard(accel::Device(accel::DeviceType::CUDA, 1));
    EXPECT_EQ(cuda.getCurrentDevice(), 1);
  }
  EXPECT_EQ(cuda.getCurrentDevice(), 0);

  const auto* device = reinterpret_cast<const void*>(std::uintptr_t{0xD00000000000} + 64);
  const auto* pinned = reinterpret_cast<const void*>(std::uintptr_t{0xB00000000000} + 8);
  int local = 0;
  EXPECT_TRUE(cuda.isPinnedPtr(pinned));
  EXPECT_FALSE(cuda.isPinnedPtr(device));
  EXPECT_FALSE(cuda.isPinnedPtr(&local));
  EXPECT_EQ(cuda.getDeviceFromPtr(device), accel::Device(accel::DeviceType::CUDA, 1));
  EXPECT_THROW((void)cuda.getDeviceFromPtr(&local), accel::InvalidArgument);
  EXPECT_NE(cuda.showConfig().find("devices: 2"), std::string::npos);

  EXPECT_EQ(forbiddenDriverCalls(), 0) << "a probe or a current-device hook reached a "
                                          "context-creating driver function";
}

}  // namespace
