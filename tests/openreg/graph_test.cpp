// openreg graphs: capture, instantiate, replay, reset, private pools, and
// the errors a device raises for capture misuse.
#include "openreg_test_support.h"

namespace {

using openreg_test::OpenRegTest;
using openreg_test::readBack;
using openreg_test::upload;

class OpenRegGraphTest : public OpenRegTest {
 protected:
  void SetUp() override {
    OpenRegTest::SetUp();
    stream_ = hooks().getNewStream(1);
    hooks().setCurrentDevice(1);
    hooks().setCurrentStream(stream_);
  }
  void TearDown() override {
    for (accel::GraphId graph : graphs_) {
      try {
        hooks().graphDestroy(graph);
      } catch (const accel::Error&) {
      }
    }
    OpenRegTest::TearDown();
  }
  accel::GraphId newGraph(bool keep_graph = false) {
    graphs_.push_back(hooks().graphCreate(keep_graph));
    return graphs_.back();
  }
  // Enqueues "x[i] = x[i] * 2 + 1" on the current stream.
  void enqueueStep(void* x, std::size_t count) {
    accel::openreg::launchKernel(stream_, "step", {{"x", x, count * sizeof(int)}},
                                 [](const accel::openreg::KernelContext& k) {
                                   for (int& v : k.buffer<int>("x")) v = v * 2 + 1;
                                 });
  }

  accel::Stream stream_;
  std::vector<accel::GraphId> graphs_;
};

TEST_F(OpenRegGraphTest, CapturedWorkDoesNotRunUntilReplayed) {
  accel::DataPtr x = accel::openreg::allocate(4 * sizeof(int), 1);
  upload(x.get(), std::vector<int>{0, 1, 2, 3});
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  enqueueStep(x.get(), 4);
  hooks().graphCaptureEnd(graph);
  EXPECT_EQ(readBack<int>(x.get(), 4), (std::vector<int>{0, 1, 2, 3}));
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  EXPECT_EQ(readBack<int>(x.get(), 4), (std::vector<int>{1, 3, 5, 7}));
}

TEST_F(OpenRegGraphTest, ReplayingTwiceGivesTheSameResults) {
  constexpr std::size_t kCount = 1000;
  accel::DataPtr noise = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::DataPtr copy = accel::openreg::allocate(kCount * sizeof(float), 1);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::openreg::fillUniform(stream_, static_cast<float*>(noise.get()), kCount);
  accel::openreg::copyAsync(copy.get(), noise.get(), kCount * sizeof(float), stream_);
  hooks().graphCaptureEnd(graph);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  const std::vector<float> first = readBack<float>(copy.get(), kCount);
  upload(copy.get(), std::vector<float>(kCount, -1.0f));
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  const std::vector<float> second = readBack<float>(copy.get(), kCount);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, std::vector<float>(kCount, -1.0f));
}

TEST_F(OpenRegGraphTest, KeepGraphNeedsAnExplicitInstantiate) {
  const accel::GraphId graph = newGraph(/*keep_graph=*/true);
  hooks().graphCaptureBegin(graph);
  hooks().graphCaptureEnd(graph);
  EXPECT_THROW(hooks().graphReplay(graph), accel::InvalidArgument);
  hooks().graphInstantiate(graph);
  EXPECT_NO_THROW(hooks().graphReplay(graph));
}

TEST_F(OpenRegGraphTest, ResetEmptiesTheGraphSoItCanBeCapturedAgain) {
  accel::DataPtr x = accel::openreg::allocate(sizeof(int), 1);
  upload(x.get(), std::vector<int>{0});
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  enqueueStep(x.get(), 1);
  hooks().graphCaptureEnd(graph);
  hooks().graphReset(graph);
  EXPECT_THROW(hooks().graphReplay(graph), accel::InvalidArgument);
  hooks().graphCaptureBegin(graph);
  enqueueStep(x.get(), 1);
  enqueueStep(x.get(), 1);
  hooks().graphCaptureEnd(graph);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  EXPECT_EQ(readBack<int>(x.get(), 1)[0], 3);
}

TEST_F(OpenRegGraphTest,
       SynchronizingACapturingStreamIsAnErrorThatInvalidatesTheCapture) {
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  EXPECT_THROW(hooks().synchronizeStream(stream_), accel::DeviceError);
  try {
    hooks().graphCaptureEnd(graph);
    FAIL() << "an invalidated capture ended normally";
  } catch (const accel::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("invalidated"), std::string::npos) << e.what();
  }
  // The stream left capture mode and works again.
  EXPECT_NO_THROW(hooks().synchronizeStream(stream_));
  EXPECT_THROW(hooks().graphReplay(graph), accel::InvalidArgument);
}

TEST_F(OpenRegGraphTest, QueryingACapturingStreamIsAnError) {
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  EXPECT_THROW((void)hooks().queryStream(stream_), accel::DeviceError);
  EXPECT_THROW(hooks().graphCaptureEnd(graph), accel::DeviceError);
}

TEST_F(OpenRegGraphTest, DeviceSynchronizeDuringAGlobalCaptureIsAnError) {
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph, {}, accel::CaptureMode::Global);
  EXPECT_THROW(hooks().deviceSynchronize(1), accel::DeviceError);
  EXPECT_THROW(hooks().graphCaptureEnd(graph), accel::DeviceError);
}

TEST_F(OpenRegGraphTest, DeviceSynchronizeDuringARelaxedCaptureIsAllowed) {
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph, {}, accel::CaptureMode::Relaxed);
  EXPECT_NO_THROW(hooks().deviceSynchronize(1));
  EXPECT_NO_THROW(hooks().graphCaptureEnd(graph));
}

TEST_F(OpenRegGraphTest, SynchronousCopyOnACapturingStreamIsAnError) {
  accel::DataPtr x = accel::openreg::allocate(sizeof(int), 1);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  int value = 1;
  EXPECT_THROW(accel::openreg::copy(x.get(), &value, sizeof(int)), accel::DeviceError);
  EXPECT_THROW(hooks().graphCaptureEnd(graph), accel::DeviceError);
}

TEST_F(OpenRegGraphTest, CapturingTheDefaultStreamIsRejected) {
  hooks().setCurrentStream(hooks().getDefaultStream(1));
  const accel::GraphId graph = newGraph();
  EXPECT_THROW(hooks().graphCaptureBegin(graph), accel::InvalidArgument);
}

TEST_F(OpenRegGraphTest, StateMachineMisuseIsRejected) {
  const accel::GraphId graph = newGraph();
  EXPECT_THROW(hooks().graphCaptureEnd(graph), accel::InvalidArgument);
  EXPECT_THROW(hooks().graphInstantiate(graph), accel::InvalidArgument);
  EXPECT_THROW(hooks().graphReplay(graph), accel::InvalidArgument);
  hooks().graphCaptureBegin(graph);
  EXPECT_THROW(hooks().graphCaptureBegin(graph), accel::InvalidArgument);
  const accel::GraphId other = newGraph();
  EXPECT_THROW(hooks().graphCaptureBegin(other), accel::InvalidArgument);  // stream busy
  EXPECT_THROW(hooks().graphReset(graph), accel::InvalidArgument);
  hooks().graphCaptureEnd(graph);
  EXPECT_THROW(hooks().graphCaptureBegin(graph), accel::InvalidArgument);
  EXPECT_THROW(hooks().graphReplay(987654), accel::InvalidArgument);
}

TEST_F(OpenRegGraphTest, EventsCannotBeRecordedIntoACapture) {
  const accel::EventId event = hooks().createEvent(1);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  EXPECT_THROW(hooks().recordEvent(event, stream_), accel::NotSupported);
  EXPECT_THROW(hooks().blockStream(event, stream_), accel::NotSupported);
  hooks().graphCaptureEnd(graph);
  hooks().destroyEvent(event);
}

TEST_F(OpenRegGraphTest, AllocationsDuringCaptureComeFromThePrivatePoolUntilReset) {
  const accel::MemoryStats before = hooks().memoryStats(1);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  const accel::MempoolId pool = hooks().graphPool(graph);
  EXPECT_FALSE(pool.isDefault());
  void* address = nullptr;
  {
    accel::DataPtr scratch = accel::openreg::allocate(4096, 1);
    address = scratch.get();
    enqueueStep(scratch.get(), 4);
  }  // freed during capture: the graph still uses it
  hooks().graphCaptureEnd(graph);
  // The pool got its own 2 MiB small-pool segment from the caching allocator.
  EXPECT_EQ(hooks().memoryStats(1).reserved_bytes.current - before.reserved_bytes.current,
            2 << 20);
  // Outside capture, the pool's memory is not handed out.
  accel::DataPtr outside = accel::openreg::allocate(4096, 1);
  EXPECT_NE(outside.get(), address);
  outside.reset();
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  // The last graph using the pool went: its segment goes back to the device
  // at once (the default pool keeps what `outside` cached).
  const std::int64_t reserved = hooks().memoryStats(1).reserved_bytes.current;
  hooks().graphReset(graph);
  EXPECT_EQ(hooks().memoryStats(1).reserved_bytes.current, reserved - (2 << 20));
}

TEST_F(OpenRegGraphTest, GraphsCapturedWithOnePoolShareIt) {
  const accel::GraphId first = newGraph();
  hooks().graphCaptureBegin(first);
  hooks().graphCaptureEnd(first);
  const accel::MempoolId pool = hooks().graphPool(first);
  const accel::GraphId second = newGraph();
  hooks().graphCaptureBegin(second, pool);
  void* reused = nullptr;
  {
    accel::DataPtr a = accel::openreg::allocate(8192, 1);
    reused = a.get();
  }
  accel::DataPtr b = accel::openreg::allocate(8192, 1);
  EXPECT_EQ(b.get(), reused);  // the freed block went back to the pool
  hooks().graphCaptureEnd(second);
  EXPECT_EQ(hooks().graphPool(second), pool);
}

}  // namespace
