// The validation layer over real backends loaded as plugins of the C
// boundary, as a vendor's would be: openreg and the testdev plugin of
// tests/conformance. Each wrong program is refused in throw mode with the
// layer's report (hook, backend, device, rule), whatever the backend itself
// would have done with it (validation_rules_test.cpp shows the calls
// reaching a backend that checks nothing).
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

struct Backend {
  const char* path;
  const char* type;
};

AcceleratorHooks& loaded(const Backend& backend) {
  const DeviceType type = registerDeviceType(backend.type);
  if (processHooksTable().installed(type) == nullptr) {
    const PluginRecord record = loadBackend(backend.path);
    EXPECT_TRUE(pluginStatusIsSuccess(record.status)) << describePluginRecord(record);
  }
  return getHooks(type);
}

class ValidationOnBackends : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    (void)loaded(GetParam());
    setValidationMode(ValidationMode::Throw);
  }
  void TearDown() override { setValidationMode(ValidationMode::Off); }
  AcceleratorHooks& hooks() { return getHooks(deviceTypeFromName(GetParam().type)); }

  // `wrong` must throw InvalidArgument carrying the layer's report of `rule`.
  std::string expectReport(const std::string& rule, const std::function<void()>& wrong) {
    std::string message;
    try {
      wrong();
      ADD_FAILURE() << "not refused: " << rule;
    } catch (const InvalidArgument& e) {
      message = e.what();
    }
    EXPECT_THAT(message, HasSubstr("accel validation: "));
    EXPECT_THAT(message, HasSubstr(std::string("on '") + GetParam().type + "'"));
    EXPECT_THAT(message, HasSubstr(rule));
    EXPECT_THAT(message, HasSubstr("; called at "));
    return message;
  }
};

TEST_P(ValidationOnBackends, CopyOfAFreedBlockIsAUseAfterFree) {
  const Stream stream = hooks().getCurrentStream(0);
  DataPtr data = hooks().getDeviceAllocator(0).allocate(4096);
  void* freed = data.get();
  data.reset();
  std::vector<char> host(64);
  const std::string message = expectReport("use after free", [&] {
    hooks().copyHostToDevice(freed, host.data(), host.size(), stream);
  });
  EXPECT_THAT(message,
              HasSubstr(std::string(hookInfo(HookId::copyHostToDevice).name) + "(dst="));
  EXPECT_THAT(message, HasSubstr("freed at "));
}

TEST_P(ValidationOnBackends, WaitingOnAnEventNeverRecorded) {
  const EventId event = hooks().createEvent(0);
  expectReport("was never recorded",
               [&] { hooks().blockStream(event, hooks().getCurrentStream(0)); });
  hooks().destroyEvent(event);
}

TEST_P(ValidationOnBackends, AnEventRecordedOnAnotherDevicesStream) {
  if (hooks().deviceCount() < 2) GTEST_SKIP() << "needs two devices";
  const EventId event = hooks().createEvent(0);
  expectReport("was made on device 0",
               [&] { hooks().recordEvent(event, hooks().getCurrentStream(1)); });
  hooks().destroyEvent(event);
}

TEST_P(ValidationOnBackends, AGeneratorOfAnotherDevice) {
  if (hooks().deviceCount() < 2 || !hooks().supports(HookGroup::Fill))
    GTEST_SKIP() << "needs two devices and the fill group";
  DataPtr data = hooks().getDeviceAllocator(0).allocate(1024);
  expectReport("the generator is device 1's", [&] {
    hooks().fillRandom(hooks().getCurrentStream(0), DeviceFill::UniformFloat, data.get(),
                       16, 0.0, 1.0, hooks().getNewGenerator(1));
  });
}

TEST_P(ValidationOnBackends, ASynchronisingCallWhileCapturing) {
  if (!hooks().supports(HookGroup::Graphs)) GTEST_SKIP() << "needs the graphs group";
  const Stream capturing = hooks().getNewStream(0);
  const Stream previous = hooks().exchangeStream(capturing);
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  expectReport("a synchronising call while graph", [&] { hooks().deviceSynchronize(0); });
  hooks().graphCaptureEnd(graph);
  hooks().graphDestroy(graph);
  hooks().setCurrentStream(previous);
}

TEST_P(ValidationOnBackends, LeaksNameTheirBackendAndWhereTheyWereMade) {
  DataPtr kept = hooks().getDeviceAllocator(0).allocate(2048);
  const EventId event = hooks().createEvent(0);
  const std::string report = validationLeakReport();
  EXPECT_THAT(report, HasSubstr(std::string("of 2048 bytes, '") + GetParam().type +
                                "' device 0, made at:"));
  EXPECT_THAT(report, HasSubstr("event " + std::to_string(event)));
  hooks().destroyEvent(event);
}

INSTANTIATE_TEST_SUITE_P(Plugins, ValidationOnBackends,
                         ::testing::Values(Backend{OPENREG_PLUGIN_PATH, "openreg"},
                                           Backend{TESTDEV_PLUGIN_PATH, "testdev"}),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(info.param.type);
                         });

}  // namespace
}  // namespace accel
