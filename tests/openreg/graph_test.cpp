// openreg graphs: capture, instantiate, replay, reset, private pools, and
// the errors a device raises for capture misuse. (Captured fills' numbers
// per replay: captured_philox_test.cpp.)
#include <cstdint>
#include <latch>
#include <optional>
#include <vector>

#include "openreg_test_support.h"

namespace {

using openreg_test::OpenRegGraphTest;
using openreg_test::readBack;
using openreg_test::upload;

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
  // The capture rules every plugin's graphs share are the core's, which
  // refuses a second capture of a graph or of a stream as a DeviceError.
  EXPECT_THROW(hooks().graphCaptureBegin(graph), accel::DeviceError);
  const accel::GraphId other = newGraph();
  EXPECT_THROW(hooks().graphCaptureBegin(other), accel::DeviceError);  // stream busy
  EXPECT_THROW(hooks().graphReset(graph), accel::InvalidArgument);
  hooks().graphCaptureEnd(graph);
  EXPECT_THROW(hooks().graphCaptureBegin(graph), accel::DeviceError);
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
