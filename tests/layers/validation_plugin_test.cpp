// The validation layer in front of a C plugin that checks nothing
// (lax_plugin.c), loaded by path as a vendor's plugin would be: each wrong
// program reaches the plugin's function with the layer off, and is refused
// with the layer's report in throw mode, the plugin never called.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "accel/validation.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

AcceleratorHooks& laxplug() {
  static AcceleratorHooks& hooks = [&]() -> AcceleratorHooks& {
    const PluginRecord record = loadBackend(LAXPLUG_PATH);
    EXPECT_TRUE(pluginStatusIsSuccess(record.status)) << describePluginRecord(record);
    return *processHooksTable().installed(deviceTypeFromName("laxplug"));
  }();
  return hooks;
}

// How many times the plugin's `function` ("events.block") was called.
int pluginCalls(const char* function) {
  using Calls = int (*)(const char*);
  static const Calls calls = [] {
    void* library = dlopen(LAXPLUG_PATH, RTLD_NOW | RTLD_NOLOAD);
    return library != nullptr ? reinterpret_cast<Calls>(dlsym(library, "laxplug_calls"))
                              : nullptr;
  }();
  return calls != nullptr ? calls(function) : -1;
}

AcceleratorHooks& servedPlugin() { return getHooks(laxplug().deviceType()); }

class ValidationOnAPluginThatChecksNothing : public ::testing::Test {
 protected:
  void SetUp() override { (void)laxplug(); }
  void TearDown() override { setValidationMode(ValidationMode::Off); }

  void expectRefused(const char* function, const std::string& rule,
                     const std::function<void()>& wrong) {
    setValidationMode(ValidationMode::Off);
    const int before_off = pluginCalls(function);
    ASSERT_GE(before_off, 0) << function;
    EXPECT_NO_THROW(wrong());
    EXPECT_GT(pluginCalls(function), before_off)
        << "the wrong call did not reach the plugin";
    setValidationMode(ValidationMode::Throw);
    const int before_on = pluginCalls(function);
    std::string message;
    try {
      wrong();
      ADD_FAILURE() << "not refused: " << rule;
    } catch (const InvalidArgument& e) {
      message = e.what();
    }
    EXPECT_THAT(message, HasSubstr("on 'laxplug' device"));
    EXPECT_THAT(message, HasSubstr(rule));
    EXPECT_EQ(pluginCalls(function), before_on) << "the plugin saw the refused call";
  }
};

TEST_F(ValidationOnAPluginThatChecksNothing, WaitOnAnEventNeverRecorded) {
  expectRefused("events.block", "was never recorded", [] {
    const EventId event = servedPlugin().createEvent(0);
    servedPlugin().blockStream(event, servedPlugin().getCurrentStream(0));
    servedPlugin().destroyEvent(event);
  });
}

TEST_F(ValidationOnAPluginThatChecksNothing, RecordAnEventOnAnotherDevicesStream) {
  expectRefused("events.record", "was made on device 0", [] {
    const EventId event = servedPlugin().createEvent(0);
    servedPlugin().recordEvent(event, servedPlugin().getCurrentStream(1));
    servedPlugin().destroyEvent(event);
  });
}

TEST_F(ValidationOnAPluginThatChecksNothing, UseADestroyedEvent) {
  expectRefused("events.synchronize", "was destroyed", [] {
    const EventId event = servedPlugin().createEvent(0);
    servedPlugin().recordEvent(event, servedPlugin().getCurrentStream(0));
    servedPlugin().destroyEvent(event);
    servedPlugin().synchronizeEvent(event);
  });
}

TEST_F(ValidationOnAPluginThatChecksNothing, UseAStreamWithAnotherDevice) {
  expectRefused("streams.query", "was made on device 1", [] {
    const Stream made = servedPlugin().getNewStream(1);
    (void)servedPlugin().queryStream(
        Stream{Device(servedPlugin().deviceType(), 0), made.id});
  });
}

TEST_F(ValidationOnAPluginThatChecksNothing, SynchroniseADeviceWhileCapturing) {
  expectRefused("device.synchronize", "a synchronising call while graph", [] {
    const GraphId graph = servedPlugin().graphCreate();
    servedPlugin().graphCaptureBegin(graph);
    try {
      servedPlugin().deviceSynchronize(0);
    } catch (...) {
      servedPlugin().graphCaptureEnd(graph);
      servedPlugin().graphDestroy(graph);
      throw;
    }
    servedPlugin().graphCaptureEnd(graph);
    servedPlugin().graphDestroy(graph);
  });
}

// The core's cache hands a freed block's address to the next allocation of
// its size: a late copy through the old pointer then writes into the new
// owner's memory, and no check can tell. The layer holds the freed block
// back, so the address stays freed and the copy is caught.
TEST_F(ValidationOnAPluginThatChecksNothing, ALateCopyIntoAFreedBlock) {
  expectRefused("copies.host_to_device", "use after free", [] {
    const Stream stream = servedPlugin().getCurrentStream(0);
    DataPtr first = servedPlugin().getDeviceAllocator(0).allocate(512);
    void* freed = first.get();
    first.reset();
    DataPtr next = servedPlugin().getDeviceAllocator(0).allocate(512);
    std::vector<char> host(64, 'x');
    servedPlugin().copyHostToDevice(freed, host.data(), host.size(), stream);
  });
}

}  // namespace
}  // namespace accel
