// libaccel_openreg.so loaded as a plugin, by a program that does not link it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "accel/accel.h"
#include "accel/plugin.h"

namespace {

TEST(OpenRegPluginTest, LoadsThroughThePluginLoaderAndWorks) {
  if (accel::findDeviceType("openreg").has_value()) {
    GTEST_SKIP() << "needs a process where openreg was never loaded (--gtest_repeat)";
  }
  ::setenv("ACCEL_OPENREG_DEVICES", "3", 1);
  const accel::PluginRecord record = accel::loadBackend(ACCEL_OPENREG_PLUGIN_PATH);
  EXPECT_EQ(record.status, accel::PluginStatus::Loaded)
      << accel::describePluginRecord(record);
  EXPECT_EQ(record.plugin_name, "openreg");
  const accel::DeviceType openreg = accel::deviceTypeFromName("openreg");
  ASSERT_EQ(record.registered, std::vector<accel::DeviceType>{openreg});

  accel::AcceleratorHooks& hooks = accel::getHooks(openreg);
  EXPECT_EQ(hooks.deviceCount(), 3);
  accel::globalContext().lazyInitDevice(openreg);
  accel::DataPtr buffer = hooks.getDeviceAllocator(2).allocate(128);
  EXPECT_EQ(hooks.getDeviceFromPtr(buffer.get()), accel::Device(openreg, 2));
  EXPECT_NE(accel::hooksOrigin(openreg).find("libaccel_openreg.so"), std::string::npos)
      << accel::hooksOrigin(openreg);

  const accel::PluginRecord again = accel::loadBackend(ACCEL_OPENREG_PLUGIN_PATH);
  EXPECT_EQ(again.status, accel::PluginStatus::AlreadyLoaded);
}

}  // namespace
