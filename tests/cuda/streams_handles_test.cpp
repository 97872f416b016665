// Streams, events and library handles of the backend on the runtime double:
// what the conformance suite does not reach (priorities, external streams,
// cuBLASLt and cuSOLVER handles, CUDA's errors mapped to accelhooks' ones).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "accel/cuda/handles.h"
#include "double_support.h"

namespace accel::cuda::testing {
namespace {

TEST(CudaStreams, PriorityLevelsMapToCudaPrioritiesInItsRange) {
  const auto [lowest, greatest] = cuda().streamPriorityRange();
  EXPECT_EQ(lowest, 0);
  EXPECT_EQ(greatest, 5);  // the double's range is [-5, 0], an H100's
  const Stream urgent = cuda().getNewStream(0, greatest);
  int priority = 0;
  ASSERT_EQ(cudaStreamGetPriority(nativeStream(urgent), &priority), cudaSuccess);
  EXPECT_EQ(priority, -greatest);
  EXPECT_THROW((void)cuda().getNewStream(0, greatest + 1), InvalidArgument);
}

TEST(CudaStreams, QueryStreamSeesQueuedWork) {
  const Stream stream = cuda().getNewStream(0);
  {
    StreamGate busy(nativeStream(stream));
    EXPECT_FALSE(cuda().queryStream(stream));
  }
  cuda().synchronizeStream(stream);
  EXPECT_TRUE(cuda().queryStream(stream));
}

TEST(CudaStreams, ExternalStreamsAreWrappedOncePerDevice) {
  (void)cuda();  // registered, for StreamGuard
  cudaStream_t mine = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&mine), cudaSuccess);
  const Stream wrapped = wrapExternalStream(mine, 0);
  EXPECT_EQ(wrapExternalStream(mine, 0), wrapped);
  EXPECT_EQ(nativeStream(wrapped), mine);
  EXPECT_THROW((void)wrapExternalStream(mine, 1), InvalidArgument);
  EXPECT_THROW((void)wrapExternalStream(nullptr, 0), InvalidArgument);
  EXPECT_THROW((void)wrapExternalStream(mine, 7), InvalidArgument);
  EXPECT_THROW((void)nativeStream(Stream(Device(DeviceType::CUDA, 1), wrapped.id)),
               InvalidArgument);  // wrapped for cuda:0
  {
    StreamGuard guard(wrapped);
    EXPECT_EQ(cuda().getCurrentStream(0), wrapped);
  }
  EXPECT_THROW((void)nativeStream(Stream(Device(DeviceType::CUDA, 0), 31 * 32)),
               InvalidArgument);
}

TEST(CudaStreams, AStreamCreatedAtADestroyedStreamsAddressIsWrappedAsItself) {
  (void)cuda();
  cudaStream_t first = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&first), cudaSuccess);
  const Stream old = wrapExternalStream(first, 0);
  ASSERT_EQ(cudaStreamDestroy(first), cudaSuccess);
  // CUDA gives the handle out again; the double does so on purpose.
  cudaStream_t second = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&second), cudaSuccess);
  ASSERT_EQ(second, first) << "the double reuses a destroyed stream's handle";
  const Stream now = wrapExternalStream(second, 1);
  EXPECT_EQ(now.device.index(), 1);
  EXPECT_EQ(nativeStream(now), second);
  EXPECT_NE(now, old);
  {
    StreamGuard guard(now);
    const EventId event = cuda().createEvent(1);
    cuda().recordEvent(event, now);
    cuda().synchronizeEvent(event);
    cuda().destroyEvent(event);
  }
  // Back on device 0 at the same address: the first id names it again.
  ASSERT_EQ(cudaStreamDestroy(second), cudaSuccess);
  cudaStream_t third = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&third), cudaSuccess);
  ASSERT_EQ(third, first);
  EXPECT_EQ(wrapExternalStream(third, 0), old);
  cuda().synchronizeStream(old);
  EXPECT_THROW((void)wrapExternalStream(third, 1), InvalidArgument);  // cuda:0's
  ASSERT_EQ(cudaStreamDestroy(third), cudaSuccess);
}

// wrapExternalStream asks CUDA for the stream's device: a handle CUDA no
// longer knows is refused with InvalidArgument, not wrapped.
TEST(CudaStreams, WrappingADestroyedStreamIsRefused) {
  (void)cuda();
  cudaStream_t gone = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&gone), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(gone), cudaSuccess);
  try {
    (void)wrapExternalStream(gone, 0);
    ADD_FAILURE() << "a destroyed stream was wrapped";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cudaStreamGetDevice"), std::string::npos)
        << e.what();
  }
  (void)cudaGetLastError();  // the double records the error as CUDA would
}

TEST(CudaEvents, AnEventIsRecordedOnlyOnItsDevicesStreams) {
  const EventId event = cuda().createEvent(0);
  EXPECT_THROW(cuda().recordEvent(event, cuda().getNewStream(1)), InvalidArgument);
  cuda().blockStream(event, cuda().getNewStream(1));  // waiting across devices is fine
  cuda().destroyEvent(event);
  EXPECT_THROW((void)cuda().queryEvent(event), InvalidArgument);
}

TEST(CudaEvents, TimingNeedsTimedCompletedEvents) {
  const Stream stream = cuda().getNewStream(0);
  const EventId untimed = cuda().createEvent(0);
  const EventId timed = cuda().createEvent(0, {.enable_timing = true});
  cuda().recordEvent(untimed, stream);
  {
    StreamGate busy(nativeStream(stream));
    cuda().recordEvent(timed, stream);
    EXPECT_FALSE(cuda().queryEvent(timed));
    EXPECT_THROW((void)cuda().elapsedTime(timed, timed), DeviceError);  // not ready
  }
  cuda().synchronizeEvent(timed);
  EXPECT_THROW((void)cuda().elapsedTime(untimed, timed), InvalidArgument);
  EXPECT_GE(cuda().elapsedTime(timed, timed), 0.0);
  cuda().destroyEvent(untimed);
  cuda().destroyEvent(timed);
}

TEST(CudaHandlePools, CublasLtAndCusolverHandlesArePerThread) {
  cublasLtHandle_t lt = nullptr;
  cusolverDnHandle_t solver = nullptr;
  std::thread([&] {
    StreamGuard guard(cuda().getNewStream(0));
    lt = getCurrentCublasLtHandle();
    EXPECT_EQ(getCurrentCublasLtHandle(0), lt);
    const Workspace workspace = getCurrentCublasLtWorkspace();
    EXPECT_NE(workspace.data, nullptr);
    EXPECT_EQ(workspace.bytes, std::size_t{1} << 20);
    solver = getCurrentCusolverDnHandle();
    EXPECT_NE(solver, nullptr);
  }).join();
  std::thread([&] {
    EXPECT_EQ(getCurrentCublasLtHandle(0), lt) << "an exited thread's handle is reused";
    EXPECT_EQ(getCurrentCusolverDnHandle(0), solver);
  }).join();
  EXPECT_THROW((void)getCurrentCublasHandle(9), InvalidArgument);
}

TEST(CudaDevice, PropertiesComeFromTheRuntime) {
  const DeviceProperties properties = cuda().getDeviceProperties(1);
  EXPECT_EQ(properties.name, "CUDA runtime double 1");
  EXPECT_EQ(properties.compute_capability_major, 9);
  EXPECT_EQ(properties.uuid.rfind("GPU-", 0), 0u);
  EXPECT_EQ(properties.uuid.size(), 4u + 32u);
}

}  // namespace
}  // namespace accel::cuda::testing
