// The CUDA driver probe and fork: a child forked while another thread is
// inside the probe (dlopen, cuInit) gets a driver without devices that says
// why, never a wait for a probe no thread of it will finish. Against the
// fake libcuda.so.1 (fake_driver.cpp), whose cuInit the test holds; the
// probe (driver.cpp) is compiled into the test. Run by hand without the
// fake's setup, it skips.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "driver.h"
#include "support/forked_child.h"

namespace accel::cuda::detail {
namespace {

TEST(CudaDriverFork, AChildForkedDuringTheProbeGetsNoDevicesAndTheReason) {
  if (std::getenv("FAKE_CUDA_DEVICES") == nullptr)
    GTEST_SKIP() << "run through ctest (needs the fake driver's setup)";
  void* fake = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  auto hold = reinterpret_cast<void (*)(int)>(dlsym(fake, "fake_cuda_hold_init"));
  auto wait_for_held =
      reinterpret_cast<void (*)()>(dlsym(fake, "fake_cuda_wait_for_held_init"));
  ASSERT_NE(hold, nullptr) << "the fake driver is not the libcuda.so.1 loaded";
  ASSERT_NE(wait_for_held, nullptr);
  hold(1);
  int parent_count = -1;
  std::thread probing([&] { parent_count = driver().device_count; });
  wait_for_held();  // the probe is inside cuInit
  const int code = accel::testing::runInChildBounded([] {
    const Driver& d = driver();
    return !d.available() && d.reason.find("forked") != std::string::npos ? 0 : 1;
  });
  hold(0);
  probing.join();
  EXPECT_EQ(code, 0) << "1: the child got another driver; 124: it waited for the probe";
  EXPECT_EQ(parent_count, 1);
  EXPECT_EQ(&driver(), &driver());
  EXPECT_TRUE(driver().available()) << driver().reason;
}

}  // namespace
}  // namespace accel::cuda::detail
