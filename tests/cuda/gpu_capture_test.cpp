// Captures on a real GPU, where timing between threads and streams is the
// hardware's: a capture that another thread's allocator races as it begins,
// and one graph replayed on two streams without a synchronisation between
// them. On the runtime double they run too (its streams are threads); the
// deterministic versions of the same rules are tests/cuda/capture_rules_test.cpp.
// Skips with the reason without a usable CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "accel/accel.h"
#include "accel/device_fill.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "gpu_support.h"

namespace {

using accel::Device;
using accel::DeviceType;

constexpr std::size_t kMiB = std::size_t{1} << 20;

accel::AcceleratorHooks& cuda() { return accel::cuda::registerBackend(); }

// Captures begin and end on one thread while another allocates, frees and
// empties the cache: none of it may invalidate a capture, whenever it lands.
// Segments freed during a capture are freed at its end, so the other thread
// makes a bounded number of them (at most 300 x 8 MiB held at once).
TEST(CudaGpuCapture, CapturesSurviveAnotherThreadsAllocatorAsTheyBegin) {
  ACCEL_SKIP_WITHOUT_GPU();
  std::atomic<bool> done{false};
  std::thread churn([&] {
    try {
      accel::StreamGuard guard(cuda().getNewStream(0));
      for (std::size_t i = 0; i < 300; ++i) {
        // A new segment every time: the cache was emptied.
        {
          accel::DataPtr block =
              cuda().getDeviceAllocator(0).allocate((i % 8 + 1) * kMiB);
        }
        cuda().emptyCache();
      }
    } catch (const accel::Error& e) {
      ADD_FAILURE() << "the allocating thread: " << e.what();
    }
    done.store(true);
  });
  // Whatever this thread throws, the allocating thread is joined before
  // the test ends, and the error is the test's failure.
  try {
    accel::StreamGuard guard(cuda().getNewStream(0));
    const accel::Stream stream = cuda().getCurrentStream(0);
    // The core's fills write memory of its device cache only.
    const accel::DataPtr block =
        cuda().getDeviceAllocator(0).allocate(1024 * sizeof(float));
    auto* out = static_cast<float*>(block.get());
    int invalidated = 0;
    for (int i = 0; i < 20 || !done.load(); ++i) {
      const accel::GraphId graph = cuda().graphCreate();
      try {
        cuda().graphCaptureBegin(graph, {}, accel::CaptureMode::Global);
        accel::fillUniform(stream, out, 1024);
        cuda().graphCaptureEnd(graph);
      } catch (const accel::Error& e) {
        ++invalidated;
        ADD_FAILURE() << "capture " << i << ": " << e.what();
        try {
          cuda().graphCaptureEnd(graph);  // ends an invalidated capture
        } catch (const accel::Error&) {
          // the failure is reported above; ending it was cleanup only
        }
      }
      cuda().graphDestroy(graph);
      if (invalidated > 3) break;
    }
  } catch (const accel::Error& e) {
    ADD_FAILURE() << "the capturing thread: " << e.what();
  }
  churn.join();
}

// Per replay, the fill's outputs copied to pinned memory and kept on the
// host by a host function of the graph.
struct Kept {
  std::mutex mutex;
  const float* pinned = nullptr;
  std::size_t count = 0;
  std::vector<std::vector<float>> seen;
  static void keep(void* data) {
    auto& kept = *static_cast<Kept*>(data);
    std::lock_guard lock(kept.mutex);
    kept.seen.emplace_back(kept.pinned, kept.pinned + kept.count);
  }
};

// One graph replayed on stream A, then at once on stream B: each replay
// draws its own numbers (B's Philox position must not reach the slot the
// graph shares before A's fill read it).
TEST(CudaGpuCapture, ReplaysOnTwoStreamsDrawEachTheirOwnNumbers) {
  ACCEL_SKIP_WITHOUT_GPU();
  constexpr std::size_t kCount = std::size_t{1} << 20;  // fills long enough to overlap
  constexpr std::uint64_t kSeed = 5;
  constexpr int kPairs = 8;
  const accel::Stream a = cuda().getNewStream(0);
  const accel::Stream b = cuda().getNewStream(0);
  const accel::DataPtr block =
      cuda().getDeviceAllocator(0).allocate(kCount * sizeof(float));
  auto* out = static_cast<float*>(block.get());
  float* pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&pinned), kCount * sizeof(float), 0),
            cudaSuccess);
  Kept kept;
  kept.pinned = pinned;
  kept.count = kCount;
  accel::Generator generator =
      accel::makePhiloxGenerator(Device(DeviceType::CUDA, 0), kSeed);
  const accel::GraphId graph = cuda().graphCreate();
  {
    accel::StreamGuard guard(cuda().getNewStream(0));
    const accel::Stream stream = cuda().getCurrentStream(0);
    cudaStream_t native = accel::cuda::nativeStream(stream);
    cuda().graphCaptureBegin(graph);
    accel::fillUniform(stream, out, kCount, 0.f, 1.f, generator);
    ASSERT_EQ(cudaMemcpyAsync(pinned, out, kCount * sizeof(float), cudaMemcpyDeviceToHost,
                              native),
              cudaSuccess);
    ASSERT_EQ(cudaLaunchHostFunc(native, &Kept::keep, &kept), cudaSuccess);
    cuda().graphCaptureEnd(graph);
  }
  for (int pair = 0; pair < kPairs; ++pair) {
    for (const accel::Stream& on : {a, b}) {
      accel::StreamGuard guard(on);
      cuda().graphReplay(graph);
    }
  }
  cuda().synchronizeStream(a);
  cuda().synchronizeStream(b);
  ASSERT_EQ(kept.seen.size(), 2u * kPairs);
  std::vector<float> expected(kCount);
  for (std::size_t replay = 0; replay < kept.seen.size(); ++replay) {
    accel::fillUniform(std::span(expected),
                       accel::PhiloxPosition{kSeed, replay * kCount});
    EXPECT_EQ(
        std::memcmp(kept.seen[replay].data(), expected.data(), kCount * sizeof(float)), 0)
        << "replay " << replay << " did not draw its own numbers";
  }
  cuda().graphDestroy(graph);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

}  // namespace
