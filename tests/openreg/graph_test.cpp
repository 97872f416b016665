// openreg graphs: capture, instantiate, replay, reset, private pools, and
// the errors a device raises for capture misuse.
#include <chrono>
#include <cstdint>
#include <latch>
#include <optional>
#include <span>
#include <vector>

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

// Random fills: every replay draws the generator's next numbers, each the
// host fill's at the offset the replay claimed (the offset after the capture
// plus k times the graph's draw), and the generator moves by the graph's draw
// per replay, as PyTorch's CUDA graphs do.
TEST_F(OpenRegGraphTest, EveryReplayDrawsTheNextNumbersOfTheGenerator) {
  constexpr std::size_t kUniform = 1000;
  constexpr std::size_t kNormal = 33;  // odd: normals draw in pairs
  accel::DataPtr noise = accel::openreg::allocate(kUniform * sizeof(float), 1);
  accel::DataPtr copy = accel::openreg::allocate(kUniform * sizeof(float), 1);
  accel::DataPtr normal = accel::openreg::allocate(kNormal * sizeof(double), 1);
  accel::Generator generator = hooks().getNewGenerator(1);
  generator.manualSeed(7);
  generator.setOffset(40);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::openreg::fillUniform(stream_, static_cast<float*>(noise.get()), kUniform, 0.0f,
                              1.0f, generator);
  accel::openreg::copyAsync(copy.get(), noise.get(), kUniform * sizeof(float), stream_);
  accel::openreg::fillNormal(stream_, static_cast<double*>(normal.get()), kNormal, 1.0,
                             2.0, generator);
  hooks().graphCaptureEnd(graph);
  EXPECT_EQ(generator.offset(), 40u);  // capturing draws nothing
  const std::uint64_t uniform_draw =
      accel::fillOutputs(accel::FillKind::UniformFloat, kUniform);
  const std::uint64_t draw =
      uniform_draw + accel::fillOutputs(accel::FillKind::NormalDouble, kNormal);
  std::vector<float> previous;
  for (std::uint64_t k = 0; k < 3; ++k) {
    upload(copy.get(), std::vector<float>(kUniform, -1.0f));
    hooks().graphReplay(graph);
    hooks().synchronizeStream(stream_);
    std::vector<float> uniform(kUniform);
    std::vector<double> normals(kNormal);
    accel::fillUniform(std::span<float>(uniform), 0.0f, 1.0f,
                       accel::PhiloxPosition{7, 40 + k * draw});
    accel::fillNormal(std::span<double>(normals), 1.0, 2.0,
                      accel::PhiloxPosition{7, 40 + k * draw + uniform_draw});
    const std::vector<float> replayed = readBack<float>(copy.get(), kUniform);
    EXPECT_EQ(replayed, uniform) << "replay " << k;
    EXPECT_EQ(readBack<double>(normal.get(), kNormal), normals) << "replay " << k;
    EXPECT_NE(replayed, previous) << "replay " << k << " repeated the one before";
    previous = replayed;
  }
  EXPECT_EQ(generator.offset(), 40 + 3 * draw);
}

TEST_F(OpenRegGraphTest, ReplaysAndUncapturedFillsDrawInProgramOrder) {
  constexpr std::size_t kCount = 64;
  accel::DataPtr captured = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::DataPtr direct = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::Generator generator = hooks().getNewGenerator(1);
  generator.manualSeed(11);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::openreg::fillUniform(stream_, static_cast<float*>(captured.get()), kCount, 0.0f,
                              1.0f, generator);
  hooks().graphCaptureEnd(graph);
  hooks().graphReplay(graph);  // draws [0, 64)
  accel::openreg::fillUniform(stream_, static_cast<float*>(direct.get()), kCount, 0.0f,
                              1.0f, generator);  // [64, 128)
  hooks().synchronizeStream(stream_);
  const std::vector<float> first = readBack<float>(captured.get(), kCount);
  hooks().graphReplay(graph);  // [128, 192)
  hooks().synchronizeStream(stream_);
  std::vector<float> expected(3 * kCount);
  accel::fillUniform(std::span<float>(expected), 0.0f, 1.0f,
                     accel::PhiloxPosition{11, 0});
  const auto part = [&](std::size_t i) {
    return std::vector<float>(expected.begin() + i * kCount,
                              expected.begin() + (i + 1) * kCount);
  };
  EXPECT_EQ(first, part(0));
  EXPECT_EQ(readBack<float>(direct.get(), kCount), part(1));
  EXPECT_EQ(readBack<float>(captured.get(), kCount), part(2));
  EXPECT_EQ(generator.offset(), 3 * kCount);
}

TEST_F(OpenRegGraphTest, AReplayOnAnotherStreamWaitsUntilThePendingOneReadItsPosition) {
  constexpr std::size_t kCount = 256;
  accel::DataPtr noise = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::DataPtr sum = accel::openreg::allocate(kCount * sizeof(float), 1);
  upload(sum.get(), std::vector<float>(kCount, 0.0f));
  accel::Generator generator = hooks().getNewGenerator(1);
  generator.manualSeed(5);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::openreg::fillUniform(stream_, static_cast<float*>(noise.get()), kCount, 0.0f,
                              1.0f, generator);
  accel::openreg::launchKernel(stream_, "accumulate",
                               {{"noise", noise.get(), kCount * sizeof(float)},
                                {"sum", sum.get(), kCount * sizeof(float)}},
                               [](const accel::openreg::KernelContext& k) {
                                 std::span<float> total = k.buffer<float>("sum");
                                 std::span<float> noise = k.buffer<float>("noise");
                                 for (std::size_t i = 0; i < total.size(); ++i)
                                   total[i] += noise[i];
                               });
  hooks().graphCaptureEnd(graph);
  // Each operation of the first replay starts 20 ms late, each of the
  // second's 30 ms late: were the second replay enqueued at once, its
  // position would land between the first's write (20 ms) and fill (40 ms).
  // It must wait for the first replay to finish instead.
  const accel::Stream other = hooks().getNewStream(1);
  accel::openreg::setStreamLatency(stream_, std::chrono::milliseconds(20));
  accel::openreg::setStreamLatency(other, std::chrono::milliseconds(30));
  hooks().graphReplay(graph);
  hooks().setCurrentStream(other);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(other);
  hooks().synchronizeStream(stream_);
  accel::openreg::setStreamLatency(stream_, std::chrono::microseconds(0));
  accel::openreg::setStreamLatency(other, std::chrono::microseconds(0));
  std::vector<float> draws(2 * kCount);
  accel::fillUniform(std::span<float>(draws), 0.0f, 1.0f, accel::PhiloxPosition{5, 0});
  std::vector<float> expected(kCount);
  for (std::size_t i = 0; i < kCount; ++i) expected[i] = draws[i] + draws[kCount + i];
  EXPECT_EQ(readBack<float>(sum.get(), kCount), expected);
  EXPECT_EQ(generator.offset(), 2 * kCount);
}

TEST_F(OpenRegGraphTest, AGraphWithoutFillsLeavesTheGeneratorsAlone) {
  accel::DataPtr x = accel::openreg::allocate(4 * sizeof(int), 1);
  upload(x.get(), std::vector<int>{0, 1, 2, 3});
  accel::Generator generator = hooks().getDefaultGenerator(1);
  const std::uint64_t before = generator.offset();
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  enqueueStep(x.get(), 4);
  hooks().graphCaptureEnd(graph);
  hooks().graphReplay(graph);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  EXPECT_EQ(readBack<int>(x.get(), 4), (std::vector<int>{3, 7, 11, 15}));
  EXPECT_EQ(generator.offset(), before);
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

std::vector<accel::MemorySegment> segmentsOfDevice1(accel::AcceleratorHooks& hooks) {
  accel::MemorySnapshotOptions options;
  options.device = 1;
  options.include_trace = false;
  return hooks.memorySnapshot(options).segments;
}

// The pool whose cached segment on device 1 holds `address`, or nothing.
std::optional<accel::MempoolId> poolHolding(accel::AcceleratorHooks& hooks,
                                            const void* address) {
  const auto at = reinterpret_cast<std::uint64_t>(address);
  for (const accel::MemorySegment& segment : segmentsOfDevice1(hooks)) {
    if (at >= segment.address && at < segment.address + segment.total_size) {
      return segment.pool;
    }
  }
  return std::nullopt;
}

std::int64_t bytesInPool(accel::AcceleratorHooks& hooks, accel::MempoolId pool) {
  std::int64_t bytes = 0;
  for (const accel::MemorySegment& segment : segmentsOfDevice1(hooks)) {
    if (segment.pool == pool) bytes += static_cast<std::int64_t>(segment.total_size);
  }
  return bytes;
}

// Two threads, each on a stream of its own, capture at the same time into
// two graphs that share one private pool. The captures overlap and end in the
// opposite order they began, and the second thread allocates both while the
// first capture runs and after it ended: every captured allocation must come
// from the shared pool, whichever capture is still open. The latches only fix
// that interleaving; the pool and the streams are used from both threads.
TEST_F(OpenRegGraphTest, TwoThreadsCaptureConcurrentlyIntoGraphsSharingAPool) {
  constexpr std::size_t kCount = 256;
  constexpr std::size_t kBytes = kCount * sizeof(int);
  std::vector<int> input(kCount);
  for (std::size_t i = 0; i < kCount; ++i) input[i] = static_cast<int>(i);
  // Inputs and outputs live outside the pool and outlive the graphs.
  accel::DataPtr in_first = accel::openreg::allocate(kBytes, 1);
  accel::DataPtr in_second = accel::openreg::allocate(kBytes, 1);
  accel::DataPtr out_first = accel::openreg::allocate(kBytes, 1);
  accel::DataPtr out_second = accel::openreg::allocate(kBytes, 1);
  upload(in_first.get(), input);
  upload(in_second.get(), input);
  upload(out_first.get(), std::vector<int>(kCount, 0));
  upload(out_second.get(), std::vector<int>(kCount, 0));
  const accel::GraphId first = newGraph();
  const accel::GraphId second = newGraph();
  const accel::Stream first_stream = hooks().getNewStream(1);
  const accel::Stream second_stream = hooks().getNewStream(1);

  // Each thread's scratch addresses; read after join.
  std::vector<void*> first_scratch;
  std::vector<void*> second_scratch;
  // Allocates a scratch block on device 1 (noting its address), then enqueues
  // on `stream`: scratch = from; scratch[i] = scratch[i] * 2 + 1.
  const auto stepIntoScratch = [](accel::Stream stream, const void* from,
                                  std::vector<void*>& addresses) {
    accel::DataPtr scratch = accel::openreg::allocate(kBytes, 1);
    addresses.push_back(scratch.get());
    accel::openreg::copyAsync(scratch.get(), from, kBytes, stream);
    accel::openreg::launchKernel(stream, "step", {{"x", scratch.get(), kBytes}},
                                 [](const accel::openreg::KernelContext& k) {
                                   for (int& v : k.buffer<int>("x")) v = v * 2 + 1;
                                 });
    return scratch;
  };
  accel::MempoolId pool;  // written by the first thread before `first_began`
  std::latch first_began(1);
  std::latch second_allocated(1);
  std::latch first_ended(1);

  std::thread first_thread([&] {
    hooks().setCurrentDevice(1);
    hooks().setCurrentStream(first_stream);
    hooks().graphCaptureBegin(first);
    pool = hooks().graphPool(first);
    first_began.count_down();
    second_allocated.wait();
    accel::DataPtr scratch = stepIntoScratch(first_stream, in_first.get(), first_scratch);
    accel::openreg::copyAsync(out_first.get(), scratch.get(), kBytes, first_stream);
    scratch.reset();  // the graph keeps the block
    hooks().graphCaptureEnd(first);
    first_ended.count_down();
  });
  std::thread second_thread([&] {
    hooks().setCurrentDevice(1);
    hooks().setCurrentStream(second_stream);
    first_began.wait();
    hooks().graphCaptureBegin(second, pool);
    accel::DataPtr before =
        stepIntoScratch(second_stream, in_second.get(), second_scratch);
    second_allocated.count_down();
    first_ended.wait();
    // The first capture on this pool has ended; this one has not.
    accel::DataPtr after = stepIntoScratch(second_stream, before.get(), second_scratch);
    accel::openreg::copyAsync(out_second.get(), after.get(), kBytes, second_stream);
    hooks().graphCaptureEnd(second);
  });
  first_thread.join();
  second_thread.join();

  ASSERT_FALSE(pool.isDefault());
  EXPECT_EQ(hooks().graphPool(second), pool);
  for (void* scratch : first_scratch) EXPECT_EQ(poolHolding(hooks(), scratch), pool);
  ASSERT_EQ(second_scratch.size(), 2u);
  EXPECT_EQ(poolHolding(hooks(), second_scratch[0]), pool);
  EXPECT_EQ(poolHolding(hooks(), second_scratch[1]), pool)
      << "allocated after the other capture on the pool ended";
  EXPECT_EQ(first_scratch.size(), 1u);

  // Nothing ran during capture; each replay computes its graph's result.
  EXPECT_EQ(readBack<int>(out_first.get(), kCount), std::vector<int>(kCount, 0));
  hooks().graphReplay(first);
  hooks().graphReplay(second);
  hooks().synchronizeStream(stream_);
  std::vector<int> once(kCount);
  std::vector<int> twice(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    once[i] = input[i] * 2 + 1;
    twice[i] = once[i] * 2 + 1;
  }
  EXPECT_EQ(readBack<int>(out_first.get(), kCount), once);
  EXPECT_EQ(readBack<int>(out_second.get(), kCount), twice);

  // The pool lives while either graph does, and goes with the last one.
  const std::int64_t pool_bytes = bytesInPool(hooks(), pool);
  EXPECT_GT(pool_bytes, 0);
  const std::int64_t reserved = hooks().memoryStats(1).reserved_bytes.current;
  hooks().graphReset(first);
  EXPECT_EQ(bytesInPool(hooks(), pool), pool_bytes);
  hooks().graphReset(second);
  EXPECT_EQ(bytesInPool(hooks(), pool), 0);
  EXPECT_EQ(hooks().memoryStats(1).reserved_bytes.current, reserved - pool_bytes);
}

}  // namespace
