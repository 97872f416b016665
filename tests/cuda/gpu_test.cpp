// The cuda backend on a GPU: handle pools under 16 threads, fills bit-identical
// with the host, graphs, the OOM path. Every test skips with the reason on a
// machine without a usable CUDA device.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "accel/accel.h"
#include "accel/cuda/handles.h"
#include "accel/device_fill.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "gpu_support.h"

namespace {

using accel::Device;
using accel::DeviceType;

accel::AcceleratorHooks& cuda() { return accel::cuda::registerBackend(); }

void check(cudaError_t status) {
  ASSERT_EQ(status, cudaSuccess) << cudaGetErrorString(status);
}

// C = A * B for n x n column-major matrices on the host, in double.
std::vector<float> hostGemm(const std::vector<float>& a, const std::vector<float>& b,
                            int n) {
  std::vector<float> c(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += double(a[i + k * n]) * b[k + j * n];
      c[i + j * n] = static_cast<float>(sum);
    }
  }
  return c;
}

TEST(CudaGpu, SixteenThreadsRunGemmsOnTheirOwnStreamsWithPooledHandles) {
  ACCEL_SKIP_WITHOUT_GPU();
  constexpr int kThreads = 16;
  constexpr int n = 64;
  const std::size_t bytes = sizeof(float) * n * n;
  std::vector<std::thread> threads;
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        accel::StreamGuard guard(cuda().getNewStream(0));
        cublasHandle_t handle = accel::cuda::getCurrentCublasHandle(0);
        if (accel::cuda::getCurrentCublasHandle(0) != handle)
          failures[t] = "handle changed";
        std::vector<float> a(n * n), b(n * n), c(n * n);
        accel::fillUniform(std::span(a), -1.0f, 1.0f, accel::PhiloxPosition{42u + t, 0});
        accel::fillUniform(std::span(b), -1.0f, 1.0f, accel::PhiloxPosition{99u + t, 0});
        float *da, *db, *dc;
        cudaMalloc(&da, bytes);
        cudaMalloc(&db, bytes);
        cudaMalloc(&dc, bytes);
        cudaStream_t stream = accel::cuda::nativeStream(cuda().getCurrentStream(0));
        cudaMemcpyAsync(da, a.data(), bytes, cudaMemcpyHostToDevice, stream);
        cudaMemcpyAsync(db, b.data(), bytes, cudaMemcpyHostToDevice, stream);
        const float one = 1, zero = 0;
        if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n,
                        &zero, dc, n) != CUBLAS_STATUS_SUCCESS) {
          failures[t] = "cublasSgemm failed";
        }
        cudaMemcpyAsync(c.data(), dc, bytes, cudaMemcpyDeviceToHost, stream);
        cudaStreamSynchronize(stream);
        const std::vector<float> expected = hostGemm(a, b, n);
        for (int i = 0; i < n * n; ++i) {
          if (std::fabs(c[i] - expected[i]) > 1e-3f) {
            failures[t] = "element " + std::to_string(i) + " differs";
            break;
          }
        }
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc);
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(CudaGpu, HandleOfAnExitedThreadIsReused) {
  ACCEL_SKIP_WITHOUT_GPU();
  cublasHandle_t first = nullptr, second = nullptr;
  std::thread([&] { first = accel::cuda::getCurrentCublasHandle(0); }).join();
  std::thread([&] { second = accel::cuda::getCurrentCublasHandle(0); }).join();
  EXPECT_NE(first, nullptr);
  EXPECT_EQ(first, second);
}

template <typename T, typename DeviceFill, typename HostFill>
void expectDeviceEqualsHost(std::size_t count, DeviceFill deviceFill, HostFill hostFill) {
  accel::Generator onDevice = accel::makePhiloxGenerator(Device(DeviceType::CUDA, 0), 7);
  accel::Generator onHost = accel::makePhiloxGenerator(Device(), 7);
  // The core's fills write memory of its device cache only.
  const accel::DataPtr block = cuda().getDeviceAllocator(0).allocate(count * sizeof(T));
  T* data = static_cast<T*>(block.get());
  const accel::Stream stream = cuda().getCurrentStream(0);
  std::vector<T> fromDevice(count), fromHost(count);
  // The first fill starts at offset 0 (the kernel's block-aligned fast
  // path); the second where the first ended, an odd count later (the tiles).
  for (const char* fill : {"first fill", "second fill"}) {
    deviceFill(stream, data, count, onDevice);
    check(cudaMemcpy(fromDevice.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
    hostFill(std::span(fromHost), onHost);
    EXPECT_EQ(std::memcmp(fromDevice.data(), fromHost.data(), count * sizeof(T)), 0)
        << fill;
  }
}

TEST(CudaGpu, FillsAreBitIdenticalWithTheHost) {
  ACCEL_SKIP_WITHOUT_GPU();
  constexpr std::size_t kCount = (1 << 20) + 3;
  expectDeviceEqualsHost<std::uint32_t>(
      kCount, [](auto s, auto* d, auto n, auto g) { accel::fillBits(s, d, n, g); },
      [](auto out, auto& g) { accel::fillBits(out, g); });
  expectDeviceEqualsHost<std::uint64_t>(
      kCount, [](auto s, auto* d, auto n, auto g) { accel::fillBits(s, d, n, g); },
      [](auto out, auto& g) { accel::fillBits(out, g); });
  expectDeviceEqualsHost<float>(
      kCount,
      [](auto s, auto* d, auto n, auto g) { accel::fillUniform(s, d, n, 0.f, 1.f, g); },
      [](auto out, auto& g) { accel::fillUniform(out, g); });
  expectDeviceEqualsHost<double>(
      kCount,
      [](auto s, auto* d, auto n, auto g) { accel::fillUniform(s, d, n, -2.0, 5.0, g); },
      [](auto out, auto& g) { accel::fillUniform(out, -2.0, 5.0, g); });
  expectDeviceEqualsHost<float>(
      kCount,
      [](auto s, auto* d, auto n, auto g) { accel::fillNormal(s, d, n, 1.f, 2.f, g); },
      [](auto out, auto& g) { accel::fillNormal(out, 1.f, 2.f, g); });
  expectDeviceEqualsHost<double>(
      kCount,
      [](auto s, auto* d, auto n, auto g) { accel::fillNormal(s, d, n, 0.0, 1.0, g); },
      [](auto out, auto& g) { accel::fillNormal(out, 0.0, 1.0, g); });
  expectDeviceEqualsHost<std::uint8_t>(
      kCount,
      [](auto s, auto* d, auto n, auto g) { accel::fillBernoulli(s, d, n, 0.25, g); },
      [](auto out, auto& g) { accel::fillBernoulli(out, 0.25, g); });
}

// Each replay of a captured fill draws the next numbers of its generator,
// as running the fills again would: the graph reads its Philox position
// from device memory that the backend advances before each replay.
TEST(CudaGpu, CapturedFillsDrawNewNumbersOnEveryReplay) {
  ACCEL_SKIP_WITHOUT_GPU();
  constexpr std::size_t kFloats = 4099;  // a partial tile
  constexpr std::size_t kWords = 257;
  constexpr std::uint64_t kSeed = 11;
  constexpr std::uint64_t kStart = 103;  // not a multiple of 4
  accel::StreamGuard guard(cuda().getNewStream(0));
  const accel::DataPtr floatBlock =
      cuda().getDeviceAllocator(0).allocate(kFloats * sizeof(float));
  const accel::DataPtr wordBlock =
      cuda().getDeviceAllocator(0).allocate(kWords * sizeof(std::uint32_t));
  auto* floats = static_cast<float*>(floatBlock.get());
  auto* words = static_cast<std::uint32_t*>(wordBlock.get());
  accel::Generator generator =
      accel::makePhiloxGenerator(Device(DeviceType::CUDA, 0), kSeed);
  generator.setOffset(kStart);
  const accel::GraphId graph = cuda().graphCreate(/*keep_graph=*/false);
  cuda().graphCaptureBegin(graph);
  const accel::Stream stream = cuda().getCurrentStream(0);
  accel::fillUniform(stream, floats, kFloats, 0.f, 1.f, generator);
  accel::fillBits(stream, words, kWords, generator);
  cuda().graphCaptureEnd(graph);
  EXPECT_EQ(generator.offset(), kStart) << "a capture runs nothing: no outputs drawn";
  constexpr std::uint64_t kPerReplay = kFloats + kWords;
  std::vector<float> expectedFloats(kFloats), floatsBack(kFloats);
  std::vector<std::uint32_t> expectedWords(kWords), wordsBack(kWords);
  for (std::uint64_t replay = 0; replay < 3; ++replay) {
    cuda().graphReplay(graph);
    cuda().synchronizeStream(stream);
    check(cudaMemcpy(floatsBack.data(), floats, kFloats * sizeof(float),
                     cudaMemcpyDeviceToHost));
    check(cudaMemcpy(wordsBack.data(), words, kWords * sizeof(std::uint32_t),
                     cudaMemcpyDeviceToHost));
    const std::uint64_t at = kStart + replay * kPerReplay;
    accel::fillUniform(std::span(expectedFloats), accel::PhiloxPosition{kSeed, at});
    accel::fillBits(std::span(expectedWords), accel::PhiloxPosition{kSeed, at + kFloats});
    EXPECT_EQ(
        std::memcmp(floatsBack.data(), expectedFloats.data(), kFloats * sizeof(float)), 0)
        << "replay " << replay;
    EXPECT_EQ(std::memcmp(wordsBack.data(), expectedWords.data(),
                          kWords * sizeof(std::uint32_t)),
              0)
        << "replay " << replay;
    EXPECT_EQ(generator.offset(), at + kPerReplay);
  }
  // A reseeded generator: the next replay draws from the new seed.
  generator.manualSeed(kSeed + 1);  // offset 0 again
  cuda().graphReplay(graph);
  cuda().synchronizeStream(stream);
  check(cudaMemcpy(wordsBack.data(), words, kWords * sizeof(std::uint32_t),
                   cudaMemcpyDeviceToHost));
  accel::fillBits(std::span(expectedWords), accel::PhiloxPosition{kSeed + 1, kFloats});
  EXPECT_EQ(
      std::memcmp(wordsBack.data(), expectedWords.data(), kWords * sizeof(std::uint32_t)),
      0);
  cuda().graphDestroy(graph);
}

// A graph with more captured fills than one write of their positions holds
// (64) and than one chunk of slots (256): every fill draws its own part of
// the generator's stream at each replay, in capture order.
TEST(CudaGpu, ManyCapturedFillsEachDrawTheirOwnNumbers) {
  ACCEL_SKIP_WITHOUT_GPU();
  constexpr std::size_t kFills = 300;
  constexpr std::size_t kWords = 5;
  constexpr std::uint64_t kSeed = 29;
  accel::StreamGuard guard(cuda().getNewStream(0));
  const accel::DataPtr block =
      cuda().getDeviceAllocator(0).allocate(kFills * kWords * sizeof(std::uint32_t));
  auto* words = static_cast<std::uint32_t*>(block.get());
  accel::Generator generator =
      accel::makePhiloxGenerator(Device(DeviceType::CUDA, 0), kSeed);
  const accel::GraphId graph = cuda().graphCreate(/*keep_graph=*/false);
  cuda().graphCaptureBegin(graph);
  const accel::Stream stream = cuda().getCurrentStream(0);
  for (std::size_t i = 0; i < kFills; ++i)
    accel::fillBits(stream, words + i * kWords, kWords, generator);
  cuda().graphCaptureEnd(graph);
  std::vector<std::uint32_t> back(kFills * kWords), expected(kWords);
  for (std::uint64_t replay = 0; replay < 2; ++replay) {
    cuda().graphReplay(graph);
    cuda().synchronizeStream(stream);
    check(cudaMemcpy(back.data(), words, back.size() * sizeof(std::uint32_t),
                     cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kFills; ++i) {
      const std::uint64_t at = (replay * kFills + i) * kWords;
      accel::fillBits(std::span(expected), accel::PhiloxPosition{kSeed, at});
      ASSERT_EQ(std::memcmp(back.data() + i * kWords, expected.data(),
                            kWords * sizeof(std::uint32_t)),
                0)
          << "replay " << replay << ", fill " << i;
    }
  }
  EXPECT_EQ(generator.offset(), 2 * kFills * kWords);
  cuda().graphDestroy(graph);
}

// A replay that fails after claiming (the second generator's draw would
// pass 2^64 - 1) keeps what it claimed, as the OpenCL and openreg backends'
// do: the first generator stays moved, the second does not, and the graph
// replays on from there.
TEST(CudaGpu, AFailedReplayKeepsWhatItClaimed) {
  ACCEL_SKIP_WITHOUT_GPU();
  constexpr std::size_t kWords = 257;
  constexpr std::uint64_t kStart = 103;
  constexpr std::uint64_t kNearEnd = std::numeric_limits<std::uint64_t>::max() - 1;
  accel::StreamGuard guard(cuda().getNewStream(0));
  const accel::DataPtr firstBlock =
      cuda().getDeviceAllocator(0).allocate(kWords * sizeof(std::uint32_t));
  const accel::DataPtr secondBlock =
      cuda().getDeviceAllocator(0).allocate(kWords * sizeof(std::uint32_t));
  auto* first = static_cast<std::uint32_t*>(firstBlock.get());
  auto* second = static_cast<std::uint32_t*>(secondBlock.get());
  accel::Generator a = accel::makePhiloxGenerator(Device(DeviceType::CUDA, 0), 21);
  accel::Generator b = accel::makePhiloxGenerator(Device(DeviceType::CUDA, 0), 22);
  a.setOffset(kStart);
  b.setOffset(kStart);
  const accel::GraphId graph = cuda().graphCreate(/*keep_graph=*/false);
  cuda().graphCaptureBegin(graph);
  const accel::Stream stream = cuda().getCurrentStream(0);
  accel::fillBits(stream, first, kWords, a);
  accel::fillBits(stream, second, kWords, b);
  cuda().graphCaptureEnd(graph);
  b.setOffset(kNearEnd);
  EXPECT_THROW(cuda().graphReplay(graph), accel::InvalidArgument);
  EXPECT_EQ(a.offset(), kStart + kWords) << "a failed replay keeps what it claimed";
  EXPECT_EQ(b.offset(), kNearEnd);
  b.setOffset(kStart);
  cuda().graphReplay(graph);
  cuda().synchronizeStream(stream);
  std::vector<std::uint32_t> expected(kWords), back(kWords);
  check(cudaMemcpy(back.data(), first, kWords * sizeof(std::uint32_t),
                   cudaMemcpyDeviceToHost));
  accel::fillBits(std::span(expected), accel::PhiloxPosition{21, kStart + kWords});
  EXPECT_EQ(back, expected);
  check(cudaMemcpy(back.data(), second, kWords * sizeof(std::uint32_t),
                   cudaMemcpyDeviceToHost));
  accel::fillBits(std::span(expected), accel::PhiloxPosition{22, kStart});
  EXPECT_EQ(back, expected);
  EXPECT_EQ(a.offset(), kStart + 2 * kWords);
  cuda().graphDestroy(graph);
}

// A generator belongs to its device type: a fill that drew from another
// backend's would advance that backend's sequence.
TEST(CudaGpu, AFillRefusesAGeneratorOfAnotherDeviceTypeAndLeavesItAlone) {
  ACCEL_SKIP_WITHOUT_GPU();
  accel::Generator cpu = accel::makePhiloxGenerator(Device(DeviceType::CPU, 0));
  const accel::Stream stream = cuda().getDefaultStream(0);
  accel::DataPtr data = cuda().getDeviceAllocator(0).allocate(8 * sizeof(float));
  try {
    accel::fillUniform(stream, static_cast<float*>(data.get()), 8, 0.f, 1.f, cpu);
    ADD_FAILURE() << "a fill on cuda:0 drew from a cpu generator";
  } catch (const accel::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the generator is on cpu:0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(cpu.offset(), 0u);
}

TEST(CudaGpu, CaptureOnTheDefaultStreamIsRefused) {
  ACCEL_SKIP_WITHOUT_GPU();
  const accel::GraphId graph = cuda().graphCreate();
  EXPECT_THROW(cuda().graphCaptureBegin(graph), accel::InvalidArgument);
  cuda().graphDestroy(graph);
}

TEST(CudaGpu, ImpossibleAllocationThrowsOutOfMemory) {
  ACCEL_SKIP_WITHOUT_GPU();
  accel::Allocator& allocator = cuda().getDeviceAllocator(0);
  EXPECT_THROW((void)allocator.allocate(std::size_t{1} << 60), accel::OutOfMemory);
  accel::DataPtr small = allocator.allocate(1024);  // and the device still works
  EXPECT_EQ(cuda().getDeviceFromPtr(small.get()), Device(DeviceType::CUDA, 0));
  EXPECT_EQ(cuda().getDeviceFromPtr(static_cast<char*>(small.get()) + 100),
            Device(DeviceType::CUDA, 0));
}

TEST(CudaGpu, OutOfMemoryObserversSeeTheFailure) {
  ACCEL_SKIP_WITHOUT_GPU();
  bool observed = false;
  cuda().attachOutOfMemoryObserver(
      [&](const accel::OutOfMemoryEvent&) { observed = true; });
  EXPECT_THROW((void)cuda().getDeviceAllocator(0).allocate(std::size_t{1} << 60),
               accel::OutOfMemory);
  EXPECT_TRUE(observed);
}

TEST(CudaGpu, FreedBlocksAreCachedAndReused) {
  ACCEL_SKIP_WITHOUT_GPU();
  accel::Allocator& allocator = cuda().getDeviceAllocator(0);
  void* first = nullptr;
  {
    accel::DataPtr block = allocator.allocate(1 << 20);
    first = block.get();
  }
  const accel::MemoryStats before = cuda().memoryStats(0);
  accel::DataPtr again = allocator.allocate(1 << 20);
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(cuda().memoryStats(0).num_device_alloc, before.num_device_alloc);
}

TEST(CudaGpu, PinnedMemoryIsRecognisedAndHostMemoryIsNot) {
  ACCEL_SKIP_WITHOUT_GPU();
  accel::DataPtr pinned = cuda().getPinnedMemoryAllocator().allocate(4096);
  EXPECT_TRUE(cuda().isPinnedPtr(pinned.get()));
  EXPECT_TRUE(cuda().isPinnedPtr(static_cast<char*>(pinned.get()) + 4095));
  std::vector<char> plain(4096);
  EXPECT_FALSE(cuda().isPinnedPtr(plain.data()));
  EXPECT_THROW((void)cuda().getDeviceFromPtr(plain.data()), accel::InvalidArgument);
}

TEST(CudaGpu, EventsTimeWorkOnAStream) {
  ACCEL_SKIP_WITHOUT_GPU();
  const accel::Stream stream = cuda().getNewStream(0);
  const accel::EventId start = cuda().createEvent(0, {.enable_timing = true});
  const accel::EventId end = cuda().createEvent(0, {.enable_timing = true});
  cuda().recordEvent(start, stream);
  cuda().recordEvent(end, stream);
  cuda().synchronizeEvent(end);
  EXPECT_TRUE(cuda().queryEvent(end));
  EXPECT_GE(cuda().elapsedTime(start, end), 0.0);
  cuda().destroyEvent(start);
  cuda().destroyEvent(end);
}

TEST(CudaGpu, InterprocessEventsAreUntimedAndRefuseTiming) {
  ACCEL_SKIP_WITHOUT_GPU();
  const accel::Stream stream = cuda().getNewStream(0);
  const accel::EventId shared = cuda().createEvent(0, {.interprocess = true});
  cuda().recordEvent(shared, stream);
  cuda().synchronizeEvent(shared);
  EXPECT_TRUE(cuda().queryEvent(shared));
  EXPECT_ANY_THROW((void)cuda().elapsedTime(shared, shared));  // timing disabled
  cuda().destroyEvent(shared);
  try {
    (void)cuda().createEvent(0, {.enable_timing = true, .interprocess = true});
    FAIL() << "a timed interprocess event was created";
  } catch (const accel::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("interprocess"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("enable_timing"), std::string::npos) << e.what();
  }
}

}  // namespace
