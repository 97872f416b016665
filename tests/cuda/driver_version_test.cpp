// The driver probe's version gate: CUDA's minor version compatibility.
#include <gtest/gtest.h>

#include "driver.h"

namespace accel::cuda::detail {
namespace {

TEST(CudaDriverVersion, ADriverOfTheSameMajorVersionRunsANewerMinorRuntime) {
  EXPECT_TRUE(driverSupportsRuntime(13000, 13020));
  EXPECT_TRUE(driverSupportsRuntime(13010, 13000));
  EXPECT_TRUE(driverSupportsRuntime(14000, 13000));
  EXPECT_FALSE(driverSupportsRuntime(12090, 13000));
  EXPECT_FALSE(driverSupportsRuntime(0, 13000));
  EXPECT_EQ(
      driverTooOldReason(12040, 13020),
      "driver too old for CUDA 13 runtime: the driver supports CUDA 12.4, the plugin "
      "needs 13.0 or later; update the NVIDIA driver");
}

}  // namespace
}  // namespace accel::cuda::detail
