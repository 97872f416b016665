// Graphs of the opencl backend over cl_khr_command_buffer: what a capture
// records (fills, device-to-device copies), that nothing runs until a
// replay, that replays run in order on the current stream, the private
// pool, and what a capture refuses. (Captured fills' numbers per replay:
// captured_philox_test.cpp.)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "accel/device_fill.h"
#include "accel/hook_catalogue.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "accel/stream_guard.h"
#include "opencl_test_support.h"

namespace accel::opencl::testing {
namespace {

constexpr std::size_t kCount = 3000;  // several work-groups, a partial one
constexpr std::size_t kBytes = kCount * sizeof(float);

class GraphTest : public OpenClGraphTest {
 protected:
  std::vector<float> read(const void* device_ptr) {
    std::vector<float> out(kCount);
    hooks().copyDeviceToHost(out.data(), device_ptr, kBytes, stream_);
    hooks().synchronizeStream(stream_);
    return out;
  }
  void zero(void* device_ptr) {
    const std::vector<float> zeros(kCount, 0.0f);
    hooks().copyHostToDevice(device_ptr, zeros.data(), kBytes, stream_);
    hooks().synchronizeStream(stream_);
  }
};

// The graphs group is declared whatever the devices (the plugin registers
// without listing them); a device without a usable cl_khr_command_buffer
// refuses captures with NotSupported naming the backend, and showConfig says
// which devices can capture.
TEST_F(OpenClTest, GraphsCaptureOnlyWhereEveryDeviceHasCommandBuffers) {
  EXPECT_TRUE(hooks().supports(HookGroup::Graphs));
  const std::string config = hooks().showConfig();
  bool every = true;
  for (int i = 0; i < hooks().deviceCount(); ++i) {
    every = every && deviceInfo(static_cast<DeviceIndex>(i)).command_buffer;
  }
  if (config.find("graphs: usable (cl_khr_command_buffer") != std::string::npos) {
    EXPECT_TRUE(every) << config;
    return;
  }
  EXPECT_NE(config.find("graphs: captures refused"), std::string::npos) << config;
  const Stream side = hooks().getNewStream(0);
  const StreamGuard guard(side);
  const GraphId graph = hooks().graphCreate();
  try {
    hooks().graphCaptureBegin(graph);
    ADD_FAILURE() << "a device without cl_khr_command_buffer began a capture";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("'opencl'"), std::string::npos) << e.what();
  }
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, ReplaysRunTheCapturedFillsAndCopyOnlyWhenReplayed) {
  // Allocated before the capture: the default pool.
  DataPtr out = hooks().getDeviceAllocator(0).allocate(kBytes);
  DataPtr second = hooks().getDeviceAllocator(0).allocate(kBytes);
  zero(out.get());
  zero(second.get());
  Generator generator = makePhiloxGenerator(Device(deviceType(), 0), 1234);
  generator.setOffset(40);

  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  DataPtr scratch = hooks().getDeviceAllocator(0).allocate(kBytes);  // the graph's pool
  accel::fillUniform(stream_, static_cast<float*>(scratch.get()), kCount, -2.0f, 3.0f,
                     generator);
  hooks().copyDeviceToDevice(out.get(), scratch.get(), kBytes, stream_);
  // The same kernel object again (the thread's), with other arguments: each
  // recorded launch must keep its own.
  accel::fillUniform(stream_, static_cast<float*>(second.get()), kCount, 5.0f, 6.0f,
                     generator);
  hooks().graphCaptureEnd(graph);
  EXPECT_EQ(generator.offset(), 40u) << "a capture draws nothing";

  // Recorded, not run.
  for (const DataPtr* data : {&out, &second}) {
    const std::vector<float> before = read(data->get());
    EXPECT_TRUE(std::all_of(before.begin(), before.end(), [](float v) {
      return v == 0.0f;
    })) << "the capture ran the commands instead of recording them";
  }

  // Each replay draws the generator's next numbers (captured_philox_test.cpp
  // tests that further), the two fills each their own.
  Generator host = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1234);
  host.setOffset(40);
  std::vector<float> want(kCount), want_second(kCount);
  for (int replay = 0; replay < 3; ++replay) {
    SCOPED_TRACE(replay);
    zero(out.get());
    zero(second.get());
    hooks().graphReplay(graph);
    hooks().synchronizeStream(stream_);
    accel::fillUniform(std::span<float>(want), -2.0f, 3.0f, host);
    accel::fillUniform(std::span<float>(want_second), 5.0f, 6.0f, host);
    EXPECT_EQ(read(out.get()), want);
    EXPECT_EQ(read(second.get()), want_second);
    EXPECT_EQ(generator.offset(), host.offset());
  }
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, ReplayRunsInOrderOnTheCurrentStream) {
  DataPtr out = hooks().getDeviceAllocator(0).allocate(kBytes);
  zero(out.get());
  const GraphId graph = hooks().graphCreate(/*keep_graph=*/true);
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(out.get()), kCount);
  hooks().graphCaptureEnd(graph);
  hooks().graphInstantiate(graph);

  // Replay on another stream, held by a user event: it must wait its turn.
  const Stream other = hooks().getNewStream(0);
  ASSERT_NE(other.id, stream_.id);
  {
    StreamGuard on_other(other);
    HeldQueue held(nativeQueue(other));
    hooks().graphReplay(graph);
    EXPECT_FALSE(hooks().queryStream(other)) << "the replay ran before the work ahead";
    held.release();
    hooks().synchronizeStream(other);
  }
  const std::vector<float> got = read(out.get());
  EXPECT_TRUE(std::any_of(got.begin(), got.end(), [](float v) { return v != 0.0f; }));
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, QueryAfterAReplayWaitingForAnEarlierOneIsFalseUntilItRuns) {
  // A replay is several commands whose events the backend does not keep
  // (docs/opencl.md, "Stream queries"): after it, the stream's query asks
  // the queue. Here the replay on `second` waits, through its captured
  // fill's Philox position, for the replay held on `first`, while nothing
  // else was ever enqueued on `second`.
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  ASSERT_EQ(clGetDeviceInfo(nativeDevice(0), CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                            sizeof capabilities, &capabilities, nullptr),
            CL_SUCCESS);
  if ((capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) == 0) {
    // A second replay would wait on the host for the held first one.
    GTEST_SKIP() << "command buffers without simultaneous use replay one at a time";
  }
  DataPtr out = hooks().getDeviceAllocator(0).allocate(kBytes);
  zero(out.get());
  const GraphId graph = hooks().graphCreate(/*keep_graph=*/true);
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(out.get()), kCount);
  hooks().graphCaptureEnd(graph);
  hooks().graphInstantiate(graph);
  const Stream first = hooks().getNewStream(0);
  const Stream second = hooks().getNewStream(0);
  {
    HeldQueue held(nativeQueue(first));
    {
      StreamGuard on_first(first);
      hooks().graphReplay(graph);
    }
    {
      StreamGuard on_second(second);
      EXPECT_TRUE(hooks().queryStream(second));
      hooks().graphReplay(graph);
    }
    EXPECT_FALSE(hooks().queryStream(second))
        << "the replay ran before the one it waits for";
    held.release();
    hooks().synchronizeStream(first);
    hooks().synchronizeStream(second);
  }
  EXPECT_TRUE(hooks().queryStream(second));
  hooks().graphDestroy(graph);
}

// graphReset waits for every replay still pending, not only the latest: a
// graph without random fills replayed on two queues, the first held, the
// second done. (Without that the reset returned once the second was done and
// released the pool under the first.)
TEST_F(GraphTest, ResetWaitsForEveryPendingReplay) {
  if (!simultaneousUse()) {
    GTEST_SKIP() << "no simultaneous use here: a replay waits on the host for the "
                    "previous one, which a held queue would never finish";
  }
  DataPtr from = hooks().getDeviceAllocator(0).allocate(kBytes);
  DataPtr to = hooks().getDeviceAllocator(0).allocate(kBytes);
  zero(from.get());
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  hooks().copyDeviceToDevice(to.get(), from.get(), kBytes, stream_);
  hooks().graphCaptureEnd(graph);
  const Stream other = hooks().getNewStream(0);
  ASSERT_NE(other.id, stream_.id);
  HeldQueue held(nativeQueue(stream_));
  hooks().graphReplay(graph);  // held
  {
    StreamGuard on_other(other);
    hooks().graphReplay(graph);
  }
  hooks().synchronizeStream(other);
  std::atomic<bool> returned{false};
  std::thread reset([&] {
    hooks().graphReset(graph);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "the reset released the graph under a pending replay";
  held.release();
  reset.join();
  EXPECT_TRUE(returned.load());
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, CaptureAllocationsComeFromThePrivatePool) {
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  void* captured = nullptr;
  {
    DataPtr inside = hooks().getDeviceAllocator(0).allocate(kBytes);
    captured = inside.get();
  }  // freed into the graph's pool, not the stream's
  hooks().graphCaptureEnd(graph);
  EXPECT_FALSE(hooks().graphPool(graph).isDefault());
  DataPtr outside = hooks().getDeviceAllocator(0).allocate(kBytes);
  EXPECT_NE(outside.get(), captured) << "memory of the graph's pool was handed out "
                                        "outside the capture";
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, WhatCannotBeRecordedIsRefusedDuringACapture) {
  DataPtr data = hooks().getDeviceAllocator(0).allocate(kBytes);
  std::vector<float> host(kCount, 1.0f);
  const EventId event = hooks().createEvent(0);
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  EXPECT_THROW(hooks().copyHostToDevice(data.get(), host.data(), kBytes, stream_),
               NotSupported);
  EXPECT_THROW(hooks().copyDeviceToHost(host.data(), data.get(), kBytes, stream_),
               NotSupported);
  try {
    hooks().recordEvent(event, stream_);
    ADD_FAILURE() << "an event was recorded on a captured stream";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("records no events"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(hooks().blockStream(event, stream_), NotSupported);
  // One capture per stream: the core's rule, refused before the backend is
  // asked (DeviceError naming the graph that captures the stream).
  const GraphId second = hooks().graphCreate();
  try {
    hooks().graphCaptureBegin(second);
    ADD_FAILURE() << "a second graph captured the stream";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("is already being captured"), std::string::npos)
        << e.what();
  }
  hooks().graphCaptureEnd(graph);
  // After the capture the stream works as before.
  hooks().copyHostToDevice(data.get(), host.data(), kBytes, stream_);
  hooks().recordEvent(event, stream_);
  hooks().synchronizeEvent(event);
  hooks().destroyEvent(event);
  hooks().graphDestroy(second);
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, TheDefaultStreamIsNotCaptured) {
  StreamGuard on_default(hooks().getDefaultStream(0));
  const GraphId graph = hooks().graphCreate();
  try {
    hooks().graphCaptureBegin(graph);
    ADD_FAILURE() << "the default stream was captured";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("default stream"), std::string::npos)
        << e.what();
  }
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, DestroyingACapturingGraphEndsTheCapture) {
  DataPtr out = hooks().getDeviceAllocator(0).allocate(kBytes);
  zero(out.get());
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  hooks().graphDestroy(graph);
  // The stream runs fills again.
  accel::fillUniform(stream_, static_cast<float*>(out.get()), kCount);
  const std::vector<float> got = read(out.get());
  EXPECT_TRUE(std::any_of(got.begin(), got.end(), [](float v) { return v != 0.0f; }));
}

TEST_F(GraphTest, ReplayingBeforeInstantiatingAKeptGraphSaysWhatToCall) {
  const GraphId graph = hooks().graphCreate(/*keep_graph=*/true);
  hooks().graphCaptureBegin(graph);
  hooks().graphCaptureEnd(graph);
  try {
    hooks().graphReplay(graph);
    ADD_FAILURE() << "a kept graph replayed before it was instantiated";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(hookInfo(HookId::graphInstantiate).name),
              std::string::npos)
        << e.what();
  }
  hooks().graphDestroy(graph);
}

TEST_F(GraphTest, ThreadsCaptureAndReplayTheirOwnGraphsAtOnce) {
  constexpr int kThreads = 4;
  std::vector<Stream> streams;  // distinct pool streams (ids come round robin)
  while (streams.size() < kThreads) {
    const Stream s = hooks().getNewStream(0);
    if (s.id != stream_.id &&
        std::find(streams.begin(), streams.end(), s) == streams.end())
      streams.push_back(s);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      StreamGuard guard(streams[t]);
      DataPtr out = hooks().getDeviceAllocator(0).allocate(kBytes);
      Generator generator = makePhiloxGenerator(Device(deviceType(), 0), 100 + t);
      const GraphId graph = hooks().graphCreate();
      hooks().graphCaptureBegin(graph);
      accel::fillUniform(streams[t], static_cast<float*>(out.get()), kCount, 0.0f, 1.0f,
                         generator);
      hooks().graphCaptureEnd(graph);
      Generator host = makePhiloxGenerator(Device(DeviceType::CPU, 0), 100 + t);
      std::vector<float> want(kCount), got(kCount);
      for (int replay = 0; replay < 3; ++replay) {
        accel::fillUniform(std::span<float>(want), 0.0f, 1.0f, host);
        hooks().graphReplay(graph);
        hooks().copyDeviceToHost(got.data(), out.get(), kBytes, streams[t]);
        hooks().synchronizeStream(streams[t]);
        EXPECT_EQ(got, want) << "thread " << t << ", replay " << replay;
      }
      hooks().graphDestroy(graph);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace accel::opencl::testing
