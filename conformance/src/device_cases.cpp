// The device group: device properties, synchronisation, configuration.
#include <set>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
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
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceProperties(DeviceIndex(count)); },
      {rangeMessage(hooks, count)}))
      << hookName(HookId::getDeviceProperties) << "(" << count << ")";
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(hooks.getDeviceProperties().uuid, hooks.getDeviceProperties(last).uuid)
        << hookName(HookId::getDeviceProperties) << "(-1) after "
        << hookName(HookId::setCurrentDevice) << "(" << int(last) << ")";
    EXPECT_EQ(hooks.getDeviceProperties().name, hooks.getDeviceProperties(last).name)
        << hookName(HookId::getDeviceProperties) << "(-1) after "
        << hookName(HookId::setCurrentDevice) << "(" << int(last) << ")";
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
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.deviceSynchronize(DeviceIndex(count)); }, {rangeMessage(hooks, count)}))
      << hookName(HookId::deviceSynchronize) << "(" << count << ")";
}

void showConfigDescribesBackend(AcceleratorHooks& hooks) {
  EXPECT_FALSE(hooks.showConfig().empty())
      << hookName(HookId::showConfig) << "() returned an empty string";
}

}  // namespace

std::vector<ConformanceCase> deviceCases() {
  constexpr HookGroup g = HookGroup::Device;
  return {
      {g,
       "DevicePropertiesAreTypedAndStable",
       {HookId::getDeviceProperties},
       true,
       devicePropertiesAreTypedAndStable},
      {g,
       "DeviceSynchronizeCompletesWork",
       {HookId::deviceSynchronize},
       true,
       deviceSynchronizeCompletesWork},
      {g,
       "ShowConfigDescribesBackend",
       {HookId::showConfig},
       true,
       showConfigDescribesBackend},
  };
}

}  // namespace accel::conformance::detail
