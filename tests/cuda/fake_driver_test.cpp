// The driver probe against a fake libcuda.so.1 (fake_driver.cpp), one
// process per case (the probe runs once per process): ctest runs this
// program with LD_LIBRARY_PATH pointing at the fake and EXPECTED_REASON set
// to the text the reason must contain. Run by hand without them, it skips.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "accel/accel.h"
#include "accel/plugin.h"

namespace {

TEST(CudaFakeDriver, ProbeReportsTheDriversProblem) {
  const char* expected = std::getenv("EXPECTED_REASON");
  if (expected == nullptr)
    GTEST_SKIP() << "run through ctest (needs the fake driver's setup)";
  (void)accel::loadBackend(ACCEL_CUDA_PLUGIN_PATH);
  accel::AcceleratorHooks& cuda = accel::getHooks(accel::DeviceType::CUDA);
  EXPECT_FALSE(cuda.isAvailable());
  EXPECT_EQ(cuda.deviceCount(), 0);
  EXPECT_FALSE(cuda.hasPrimaryContext(0));
  try {
    cuda.init();
    FAIL() << "init() succeeded on a fake driver";
  } catch (const accel::NotAvailable& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("libcuda.so.1 not found"), std::string::npos)
        << "the fake driver was not loaded: " << e.what();
  }
}

}  // namespace
