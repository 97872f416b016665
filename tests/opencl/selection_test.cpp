// ACCEL_OPENCL_DEVICES as the backend parses it (device_selection.h).
#include "device_selection.h"

#include <gtest/gtest.h>

namespace accel::opencl::detail {
namespace {

TEST(OpenClSelection, EmptyMeansTheDefaultRule) {
  EXPECT_TRUE(DeviceSelection::parse("").use_default);
  EXPECT_TRUE(DeviceSelection::parse("  ").use_default);
}

TEST(OpenClSelection, TypesAndIndicesSelectTheirDevices) {
  const DeviceSelection s = DeviceSelection::parse("gpu, 1:2 ,cpu");
  EXPECT_FALSE(s.use_default);
  EXPECT_TRUE(s.selects("gpu", 0, 0));
  EXPECT_TRUE(s.selects("cpu", 3, 3));
  EXPECT_FALSE(s.selects("accelerator", 0, 0));
  EXPECT_TRUE(s.selects("accelerator", 1, 2));
  EXPECT_TRUE(DeviceSelection::parse("all").selects("other", 9, 9));
}

TEST(OpenClSelection, MalformedItemsAreRefusedNamingTheItem) {
  for (const char* bad : {"gpu,", "x", "1:", ":1", "-1:0", "0:a", "0:1:2", "GPU"}) {
    try {
      (void)DeviceSelection::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {  // the plugin's failure (types.h)
      EXPECT_NE(std::string(e.what()).find("ACCEL_OPENCL_DEVICES"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("platform:device"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace accel::opencl::detail
