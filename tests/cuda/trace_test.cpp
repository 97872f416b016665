// The tracing layer on the CUDA backend (docs/tracing.md), on the runtime
// double (or a GPU with ACCEL_CUDA_TESTS_ON_GPU): hook spans, the work of
// copies, fills and graph replays timed by CUDA events on its stream, a
// capture as a span, and the allocator's counters.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "accel/accel.h"
#include "accel/cuda/cuda.h"
#include "accel/device_fill.h"
#include "accel/trace.h"

namespace accel::cuda::testing {
namespace {

std::string hookName(HookId id) { return std::string(hookInfo(id).name); }

using nlohmann::json;

std::vector<json> events(const json& trace, const std::string& name,
                         const std::string& cat) {
  std::vector<json> found;
  for (const json& e : trace["traceEvents"])
    if (e.value("name", "") == name && e.value("cat", "") == cat) found.push_back(e);
  return found;
}

TEST(CudaTrace, HooksStreamWorkTimedByCudaEventsGraphsAndTheAllocator) {
  const DeviceType type = registerBackend().deviceType();
  trace::start({});
  AcceleratorHooks& hooks = getHooks(type);  // the layers' decorator while tracing
  const Stream stream = hooks.getNewStream(0);
  DataPtr device = hooks.getDeviceAllocator(0).allocate(1 << 20);
  DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(4096);
  hooks.copyHostToDevice(device.get(), pinned.get(), 4096, stream);
  hooks.fillRandom(stream, DeviceFill::UniformFloat, device.get(), 1024, 0.0, 1.0);
  hooks.synchronizeStream(stream);
  GraphId graph = kNoGraph;
  {
    StreamGuard guard(stream);
    graph = hooks.graphCreate();
    hooks.graphCaptureBegin(graph);
    hooks.fillRandom(stream, DeviceFill::UniformFloat, device.get(), 1024, 0.0, 1.0);
    hooks.graphCaptureEnd(graph);
    hooks.graphReplay(graph);
    hooks.synchronizeStream(stream);
  }
  hooks.graphDestroy(graph);
  trace::stop();
  const json trace = json::parse(trace::toJson());

  const std::vector<json> copies =
      events(trace, hookName(HookId::copyHostToDevice), "hook");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["args"]["backend"], "cuda");
  const std::vector<json> work =
      events(trace, hookName(HookId::copyHostToDevice), "device");
  ASSERT_EQ(work.size(), 1u);
  EXPECT_EQ(work[0]["args"]["timing"], "events");
  const std::vector<json> fills = events(trace, hookName(HookId::fillRandom), "device");
  ASSERT_EQ(fills.size(), 1u) << "the captured fill runs in the replay";
  EXPECT_EQ(fills[0]["args"]["timing"], "events");
  EXPECT_EQ(events(trace, "capture graph " + std::to_string(graph), "graph").size(), 1u);
  const std::vector<json> replays =
      events(trace, "replay graph " + std::to_string(graph), "device");
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_EQ(replays[0]["args"]["timing"], "events");
  bool allocated = false;
  for (const json& e : trace["traceEvents"])
    allocated = allocated || (e.value("name", "") == "allocated bytes" &&
                              e["args"]["bytes"].get<std::int64_t>() >= (1 << 20));
  EXPECT_TRUE(allocated);
  EXPECT_EQ(trace["otherData"]["dropped_events"], 0);
}

}  // namespace
}  // namespace accel::cuda::testing
