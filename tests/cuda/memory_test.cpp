// The backend's memory, streams and handle workspaces on the runtime double.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "accel/cuda/handles.h"
#include "accel/device_fill.h"
#include "double_support.h"
#include "support/sizes.h"

namespace accel::cuda::testing {
namespace {

using accel::testing::kMiB;

TEST(CudaMemory, UnmappingPagesWaitsForQueuedWork) {
  memory::CachingAllocator& allocator = deviceCache();
  const memory::AllocatorSettings before = allocator.settings();
  memory::AllocatorSettings expandable = before;
  expandable.expandable_segments = true;
  allocator.setSettings(expandable);
  cuda_double_reset_violations();
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  {
    StreamGate busy(nativeStream(stream));
    {
      DataPtr block = cuda().getDeviceAllocator(0).allocate(4 * kMiB);
      accel::fillUniform(stream, static_cast<float*>(block.get()), kMiB);
    }  // freed on its own stream: reusable at once, its fill still queued
    std::atomic<bool> done{false};
    std::thread opener([&] {
      // Opens the gate once emptyCache waits for the device (or returned).
      while (!done.load() && cuda_double_waiting_threads() == 0)
        std::this_thread::yield();
      busy.open();
    });
    cuda().emptyCache();
    done.store(true);
    opener.join();
  }
  cuda().synchronizeStream(stream);
  int count = 0;
  const std::string text = lastViolation(&count);
  EXPECT_EQ(count, 0) << text;
  allocator.setSettings(before);
}

TEST(CudaStreams, NativeStreamRejectsADeviceIndexOutOfRange) {
  for (const int index : {-1, cuda().deviceCount()}) {
    try {
      (void)nativeStream(
          Stream(Device(DeviceType::CUDA, static_cast<DeviceIndex>(index)), 1));
      ADD_FAILURE() << "index " << index << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos)
          << e.what();
    }
  }
}

TEST(CudaHandlePools, CublasWorkspaceKeepsTheSizeItWasAllocatedWith) {
  std::thread([] {
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":1024:1", 1);
    const Stream first = cuda().getNewStream(0);
    const Stream second = cuda().getNewStream(0);
    StreamGuard guard(first);
    const cublasHandle_t handle = getCurrentCublasHandle(0);
    void* workspace = nullptr;
    std::size_t bytes = 0;
    ASSERT_EQ(cuda_double_cublas_workspace(handle, &workspace, &bytes), 0);
    EXPECT_EQ(bytes, kMiB);
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":8192:1", 1);  // larger, after allocation
    {
      StreamGuard other(second);
      (void)getCurrentCublasHandle(0);
    }
    (void)getCurrentCublasHandle(0);  // back on `first`: bound again
    void* again = nullptr;
    ASSERT_EQ(cuda_double_cublas_workspace(handle, &again, &bytes), 0);
    EXPECT_EQ(again, workspace);
    EXPECT_EQ(bytes, kMiB) << "cuBLAS was told the workspace is larger than it is";
    ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
  }).join();
}

// The API reads CUBLAS_WORKSPACE_CONFIG in the program: a malformed value is
// the library's InvalidArgument naming the variable.
TEST(CudaHandlePools, MalformedWorkspaceConfigIsTheLibrarysInvalidArgument) {
  std::thread([] {
    ::setenv("CUBLAS_WORKSPACE_CONFIG", "nonsense", 1);
    StreamGuard guard(cuda().getNewStream(0));
    try {
      (void)getCurrentCublasHandle(0);
      ADD_FAILURE() << "a malformed CUBLAS_WORKSPACE_CONFIG was accepted";
    } catch (const accel::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("CUBLAS_WORKSPACE_CONFIG"), std::string::npos)
          << e.what();
    }
    ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
  }).join();
}

TEST(CudaHandlePools, HandleRepointedByTheCallerIsBoundAgain) {
  std::thread([] {
    const Stream mine = cuda().getNewStream(0);
    const Stream elsewhere = cuda().getNewStream(0);
    StreamGuard guard(mine);
    const cublasHandle_t handle = getCurrentCublasHandle(0);
    ASSERT_EQ(cublasSetStream(handle, nativeStream(elsewhere)), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(getCurrentCublasHandle(0), handle);
    cudaStream_t bound = nullptr;
    ASSERT_EQ(cublasGetStream(handle, &bound), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(bound, nativeStream(mine)) << "the handle stayed on the caller's stream";
    void* workspace = nullptr;
    std::size_t bytes = 0;
    ASSERT_EQ(cuda_double_cublas_workspace(handle, &workspace, &bytes), 0);
    EXPECT_NE(workspace, nullptr) << "cublasSetStream dropped the workspace";
  }).join();
}

TEST(CudaDriver, ModuleLoadingIsSetBeforeTheDriverInitialises) {
  (void)cuda().deviceCount();  // the probe
  if (const char* user = std::getenv("CUDA_MODULE_LOADING");
      user != nullptr && std::string(user) != "LAZY") {
    GTEST_SKIP() << "CUDA_MODULE_LOADING=" << user << " was set by the caller";
  }
  EXPECT_STREQ(cuda_double_module_loading_at_init(), "LAZY");
}

TEST(CudaMemory, ShowConfigSaysWhetherExpandableSegmentsAreAvailable) {
  const std::string config = cuda().showConfig();
  EXPECT_NE(config.find("expandable segments: available"), std::string::npos) << config;
}

}  // namespace
}  // namespace accel::cuda::testing
