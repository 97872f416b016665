// Table observers (src/core/layers/table_layer.h): a C plugin registered
// while an observer is added has its tables' functions wrapped; one
// registered while none is added is called directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "layers/table_layer.h"

namespace accel {
namespace {

class RecordingObserver final : public detail::TableObserver {
 public:
  void before(const detail::TableCall& call) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    befores.emplace_back(call.function);
  }
  void after(const detail::TableCall& call, std::int32_t status) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    afters.emplace_back(call.function);
    statuses.push_back(status);
  }
  [[nodiscard]] bool saw(const std::string& function) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::find(befores.begin(), befores.end(), function) != befores.end() &&
           std::find(afters.begin(), afters.end(), function) != afters.end();
  }
  std::mutex mutex;
  std::vector<std::string> befores, afters;
  std::vector<std::int32_t> statuses;
};

AcceleratorHooks& load(const char* path, const char* type) {
  const PluginRecord record = loadBackend(path);
  EXPECT_TRUE(pluginStatusIsSuccess(record.status)) << describePluginRecord(record);
  return getHooks(deviceTypeFromName(type));
}

TEST(TableObservers, SeeWhatAPluginRegisteredWhileAddedIsAsked) {
  RecordingObserver observer;
  detail::addTableObserver(observer);
  AcceleratorHooks& hooks = load(TESTDEV_PLUGIN_PATH, "testdev");
  const Stream stream = hooks.getNewStream(0);
  EXPECT_TRUE(hooks.queryStream(stream));
  // The core's own calls too: its caches' segments.
  { DataPtr data = hooks.getDeviceAllocator(0).allocate(1024); }
  detail::removeTableObserver(observer);
  EXPECT_TRUE(observer.saw("streams.create"));
  EXPECT_TRUE(observer.saw("streams.query"));
  EXPECT_TRUE(observer.saw("device_memory.allocate_segment"));
  EXPECT_TRUE(observer.saw("high.init"));
}

TEST(TableObservers, APluginRegisteredWithNoneAddedIsCalledDirectly) {
  AcceleratorHooks& hooks = load(NODEVICE_PLUGIN_PATH, "nodevice");
  RecordingObserver observer;
  detail::addTableObserver(observer);
  EXPECT_TRUE(hooks.isBuilt());
  (void)hooks.deviceCount();
  detail::removeTableObserver(observer);
  EXPECT_TRUE(observer.befores.empty());
}

}  // namespace
}  // namespace accel
