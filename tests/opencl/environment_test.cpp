// The opencl plugin in a bad environment, loaded as a framework loads it
// (accel::loadBackend, no link to the plugin). CTest runs one case per
// environment (tests/opencl/CMakeLists.txt): no ICD loader, a loader with no
// platform (OCL_ICD_VENDORS pointing at an empty folder), the only device
// excluded by ACCEL_OPENCL_DEVICES, an index that names no device, and a
// malformed ACCEL_OPENCL_DEVICES. EXPECTED_REASON is the text the backend
// must give.
//
// Without devices the probes answer benignly and the reason is in the
// configuration (`accel info`); the device hooks are refused by the core,
// which checks every device index against the count the plugin reports
// (0): InvalidArgument saying the backend reports no devices.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "accel/accel.h"
#include "accel/plugin.h"

namespace {

accel::AcceleratorHooks& loadOpenCl() {
  const accel::PluginRecord record = accel::loadBackend(ACCEL_OPENCL_PLUGIN_PATH);
  EXPECT_TRUE(accel::pluginStatusIsSuccess(record.status)) << record.detail;
  return accel::getHooks(accel::deviceTypeFromName("opencl"));
}

std::string expectedReason() {
  const char* text = std::getenv("EXPECTED_REASON");
  return text != nullptr ? text : "";
}

TEST(OpenClEnvironment, ProbeReportsWhyThereAreNoDevices) {
  ASSERT_FALSE(expectedReason().empty()) << "run through CTest (EXPECTED_REASON)";
  accel::AcceleratorHooks& hooks = loadOpenCl();
  EXPECT_TRUE(hooks.isBuilt());
  EXPECT_FALSE(hooks.isAvailable());
  EXPECT_EQ(hooks.deviceCount(), 0);
  EXPECT_FALSE(hooks.hasPrimaryContext(0));
  int probe = 0;
  EXPECT_FALSE(hooks.isPinnedPtr(&probe));
  // Initialisation succeeds (0 devices is a state, not an error)...
  EXPECT_NO_THROW(accel::globalContext().lazyInitDevice(hooks.deviceType()));
  // ...and every hook that needs a device is refused with NotAvailable,
  // saying why there is none (the plugin's unavailable_reason).
  try {
    (void)hooks.getDeviceAllocator(0).allocate(16);
    ADD_FAILURE() << "allocate() without devices returned";
  } catch (const accel::NotAvailable& e) {
    EXPECT_NE(std::string(e.what()).find(expectedReason()), std::string::npos)
        << e.what();
  }
  try {
    (void)hooks.getNewStream(0);
    ADD_FAILURE() << "a new stream was made without devices";
  } catch (const accel::NotAvailable& e) {
    EXPECT_NE(std::string(e.what()).find(expectedReason()), std::string::npos)
        << e.what();
  }
  // `accel info` shows the configuration, which names the reason.
  const std::string config = hooks.showConfig();
  EXPECT_NE(config.find(expectedReason()), std::string::npos) << config;
}

TEST(OpenClEnvironment, InitReportsTheSetting) {
  ASSERT_FALSE(expectedReason().empty()) << "run through CTest (EXPECTED_REASON)";
  accel::AcceleratorHooks& hooks = loadOpenCl();
  EXPECT_FALSE(hooks.isAvailable());  // probes stay quiet
  try {
    accel::globalContext().lazyInitDevice(hooks.deviceType());
    ADD_FAILURE() << "initialisation accepted the setting";
  } catch (const accel::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(expectedReason()), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("ACCEL_OPENCL_DEVICES"), std::string::npos)
        << e.what();
  }
}

}  // namespace
