// The backend's graphs and their memory on the runtime double: each test
// pins down one of CUDA's capture rules the backend must follow (docs/cuda.md,
// "Captures and the allocator").
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "accel/device_fill.h"
#include "accel/memory/record_stream.h"
#include "double_support.h"
#include "support/sizes.h"

namespace accel::cuda::testing {
namespace {

using accel::testing::kMiB;

TEST(CudaGraphs, ReplayRunsOnTheCurrentStream) {
  const Stream captured = cuda().getNewStream(0);
  const Stream other = cuda().getNewStream(0);
  ASSERT_NE(captured, other);
  constexpr std::size_t kCount = 256;
  // The core's fills write memory of its device cache only.
  DataPtr block = cuda().getDeviceAllocator(0).allocate(kCount * sizeof(float));
  auto* data = static_cast<float*>(block.get());
  GraphId graph = kNoGraph;
  {
    StreamGuard guard(captured);
    graph = cuda().graphCreate();
    cuda().graphCaptureBegin(graph);
    accel::fillUniform(captured, data, kCount);
    cuda().graphCaptureEnd(graph);
  }
  // cudaMemset returns before the set ran (CUDA: "asynchronous with respect
  // to the host" for device memory): wait for it.
  ASSERT_EQ(cudaMemset(data, 0, kCount * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  StreamGate busy(nativeStream(captured));  // the stream captured on is busy now
  {
    StreamGuard guard(other);
    cuda().graphReplay(graph);
    cuda().synchronizeStream(other);
  }
  EXPECT_NE(data[0], 0.0f) << "the replay did not run on the current stream";
  busy.open();
  cuda().synchronizeStream(captured);
  cuda().graphDestroy(graph);
}

TEST(CudaGraphs, AllocationDuringCaptureComesFromThePrivatePool) {
  StreamGuard guard(cuda().getNewStream(0));
  const Stream stream = cuda().getCurrentStream(0);
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);  // Global: cudaMalloc is prohibited here
  DataPtr block;
  EXPECT_NO_THROW(block = cuda().getDeviceAllocator(0).allocate(kMiB));
  if (block) accel::fillUniform(stream, static_cast<float*>(block.get()), 16);
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph)) << "the capture was invalidated";
  if (block) {
    static_cast<float*>(block.get())[0] = 0;
    cuda().graphReplay(graph);
    cuda().synchronizeStream(stream);
    EXPECT_NE(static_cast<float*>(block.get())[0], 0.0f);
  }
  block = DataPtr();
  cuda().graphDestroy(graph);
}

TEST(CudaGraphs, FreeingCacheDuringAnotherThreadsGlobalCaptureWaitsForItsEnd) {
  std::size_t free = 0, total = 0;
  { DataPtr cached = cuda().getDeviceAllocator(0).allocate(8 * kMiB); }
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  const std::size_t freeWithCache = free;
  std::promise<void> began, finish;
  std::thread capturer([&] {
    StreamGuard guard(cuda().getNewStream(0));
    const GraphId graph = cuda().graphCreate();
    cuda().graphCaptureBegin(graph, {}, CaptureMode::Global);
    began.set_value();
    finish.get_future().wait();
    EXPECT_NO_THROW(cuda().graphCaptureEnd(graph)) << "the capture was invalidated";
    cuda().graphDestroy(graph);
  });
  began.get_future().wait();
  cuda().emptyCache();  // cudaFree would be prohibited by the other thread's capture
  finish.set_value();
  capturer.join();
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  EXPECT_GE(free, freeWithCache + 8 * kMiB) << "the cached segment was never freed";
}

TEST(CudaGraphs, BlockUsedByACapturingStreamIsNotReusedEarly) {
  const Stream side = cuda().getNewStream(0);
  DataPtr block;
  {
    StreamGuard guard(side);
    block = cuda().getDeviceAllocator(0).allocate(kMiB);
  }
  void* const used = block.get();
  StreamGuard guard(cuda().getNewStream(0));
  const Stream capturing = cuda().getCurrentStream(0);
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  ASSERT_TRUE(memory::recordStreamUse(block, capturing));
  block = DataPtr();  // the allocator records an event on the capturing stream
  {
    StreamGuard onSide(side);
    DataPtr again = cuda().getDeviceAllocator(0).allocate(kMiB);
    EXPECT_NE(again.get(), used) << "reused before the capture's use was done";
  }
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph)) << "the capture was invalidated";
  cuda().graphDestroy(graph);
}

// Captures on a new stream, forks a second stream into the capture, allocates
// 1 MiB through `allocator` there, ends the capture, frees the block, and
// checks that the forked stream's next 1 MiB is not the graph's memory (it
// came from the capture's private pool, which keeps it).
void expectAForkedStreamAllocatesFromTheCapturesPool(Allocator& allocator) {
  const Stream origin = cuda().getNewStream(0);
  const Stream forked = cuda().getNewStream(0);
  StreamGuard guard(origin);
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  const EventId fork = cuda().createEvent(0);
  cuda().recordEvent(fork, origin);
  cuda().blockStream(fork, forked);  // `forked` joins the capture
  DataPtr inGraph;
  {
    StreamGuard onForked(forked);
    inGraph = allocator.allocate(kMiB);
  }
  const EventId join = cuda().createEvent(0);
  cuda().recordEvent(join, forked);
  cuda().blockStream(join, origin);
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph));
  void* const graphMemory = inGraph.get();
  inGraph = DataPtr();
  {
    StreamGuard onForked(forked);
    DataPtr later = allocator.allocate(kMiB);
    EXPECT_NE(later.get(), graphMemory) << "the graph's memory went to the default pool";
  }
  cuda().destroyEvent(fork);
  cuda().destroyEvent(join);
  cuda().graphDestroy(graph);
}

TEST(CudaGraphs, AllocationOnAStreamForkedIntoACaptureUsesThePrivatePool) {
  expectAForkedStreamAllocatesFromTheCapturesPool(cuda().getDeviceAllocator(0));
}

// The device allocator goes straight to the cache outside captures; one
// that was made and used before a capture began must still route a stream
// forked into the capture to the capture's pool.
TEST(CudaGraphs, AnAllocatorUsedBeforeTheCaptureRoutesAForkedStreamToItsPool) {
  Allocator& allocator = cuda().getDeviceAllocator(0);
  (void)allocator.allocate(kMiB);  // made and on its fast path
  expectAForkedStreamAllocatesFromTheCapturesPool(allocator);
}

TEST(CudaGraphs, EndingACaptureOnAnotherThreadKeepsItOpen) {
  StreamGuard guard(cuda().getNewStream(0));
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  std::thread([&] { EXPECT_THROW(cuda().graphCaptureEnd(graph), DeviceError); }).join();
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph));
  EXPECT_EQ(cuda_double_active_captures(), 0);
  cuda().graphDestroy(graph);
}

// An invalidated capture releases what the capture took (its private pool,
// the captured fills' Philox slots) when its end fails, so that capturing
// again into the same graph leaks nothing.
TEST(CudaGraphs, AnInvalidatedCaptureReleasesItsPool) {
  StreamGuard guard(cuda().getNewStream(0));
  const Stream stream = cuda().getCurrentStream(0);
  cuda().emptyCache();
  const std::int64_t reserved = cuda().memoryStats(0).reserved_bytes.current;
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  {
    DataPtr block = cuda().getDeviceAllocator(0).allocate(kMiB);       // the private pool
    accel::fillUniform(stream, static_cast<float*>(block.get()), 16);  // a Philox slot
  }
  // Querying an event recorded in the capture is prohibited: CUDA
  // invalidates the capture.
  cudaEvent_t inside = nullptr;
  ASSERT_EQ(cudaEventCreate(&inside), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(inside, nativeStream(stream)), cudaSuccess);
  EXPECT_NE(cudaEventQuery(inside), cudaSuccess);
  EXPECT_THROW(cuda().graphCaptureEnd(graph), Error);
  (void)cudaGetLastError();
  cuda().emptyCache();
  EXPECT_EQ(cuda().memoryStats(0).reserved_bytes.current, reserved)
      << "the failed capture's pool is still retained";
  // The graph captures again.
  cuda().graphCaptureBegin(graph);
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph));
  cuda().graphDestroy(graph);
  EXPECT_EQ(cudaEventDestroy(inside), cudaSuccess);
  EXPECT_EQ(cuda_double_active_captures(), 0);
}

}  // namespace
}  // namespace accel::cuda::testing
