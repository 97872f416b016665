// The device group: device properties, synchronisation, configuration.
#include <set>
#include <utility>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace device_cases {
namespace {

void devicePropertiesAreTypedAndStable(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  std::set<std::string> uuids;
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    DeviceProperties first = hooks.getDeviceProperties(index);
    DeviceProperties second = hooks.getDeviceProperties(index);
    EXPECT_FALSE(first.name.empty())
        << hookName(HookId::getDeviceProperties) << "(" << i << ").name is empty";
    EXPECT_EQ(first.name, second.name)
        << hookName(HookId::getDeviceProperties) << "(" << i << ").name changed";
    EXPECT_EQ(first.total_memory_bytes, second.total_memory_bytes)
        << hookName(HookId::getDeviceProperties) << "(" << i
        << ").total_memory_bytes changed";
    EXPECT_EQ(first.uuid, second.uuid)
        << hookName(HookId::getDeviceProperties) << "(" << i << ").uuid changed";
    EXPECT_GE(first.multiprocessor_count, 0)
        << hookName(HookId::getDeviceProperties) << "(" << i << ")";
    EXPECT_GE(first.warp_size, 0)
        << hookName(HookId::getDeviceProperties) << "(" << i << ")";
    if (!first.uuid.empty()) {
      EXPECT_TRUE(uuids.insert(first.uuid).second)
          << hookName(HookId::getDeviceProperties) << "(" << i << ").uuid \""
          << first.uuid << "\" is also another device's";
    }
  }
  expectIndexRejected(hooks, HookId::getDeviceProperties, count,
                      [&](DeviceIndex i) { return hooks.getDeviceProperties(i); });
  expectCurrentDeviceResolved(hooks, HookId::getDeviceProperties, [&](DeviceIndex i) {
    DeviceProperties properties = hooks.getDeviceProperties(i);
    return std::pair(properties.uuid, properties.name);
  });
}

void deviceSynchronizeCompletesWork(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    EXPECT_NO_THROW(hooks.deviceSynchronize(index))
        << hookName(HookId::deviceSynchronize) << "(" << i << ")";
    if (hooks.supports(HookGroup::Streams)) {
      EXPECT_TRUE(hooks.queryStream(hooks.getDefaultStream(index)))
          << hookName(HookId::queryStream) << "(default stream of device " << i
          << ") after " << hookName(HookId::deviceSynchronize) << "(" << i << ")";
    }
  }
  EXPECT_NO_THROW(hooks.deviceSynchronize())
      << hookName(HookId::deviceSynchronize) << "(-1)";
  expectIndexRejected(hooks, HookId::deviceSynchronize, count,
                      [&](DeviceIndex i) { hooks.deviceSynchronize(i); });
}

void showConfigDescribesBackend(AcceleratorHooks& hooks) {
  EXPECT_FALSE(hooks.showConfig().empty())
      << hookName(HookId::showConfig) << "() returned an empty string";
}

}  // namespace
}  // namespace device_cases

std::vector<ConformanceCase> deviceCases() {
  using namespace device_cases;
  using enum HookId;
  return {
      deviceCase("DevicePropertiesAreTypedAndStable", devicePropertiesAreTypedAndStable,
                 {getDeviceProperties}),
      deviceCase("DeviceSynchronizeCompletesWork", deviceSynchronizeCompletesWork,
                 {deviceSynchronize}),
      deviceCase("ShowConfigDescribesBackend", showConfigDescribesBackend, {showConfig})};
}

}  // namespace accel::conformance::detail
