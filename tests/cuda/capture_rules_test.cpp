// The capture rules of docs/cuda.md ("Captures and the allocator") that
// involve timing between threads and streams, on the runtime double: each
// test pins down one rule and fails without the code that follows it.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/device_fill.h"
#include "accel/memory/record_stream.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "device_memory.h"
#include "double_support.h"
#include "support/sizes.h"

namespace accel::cuda::testing {
namespace {

using accel::testing::kMiB;

// A block freed during a capture after use on the capturing stream is
// reused only after the work queued on that stream before the capture's end
// (the allocator's event is recorded for real once the captures end: a
// record inside the capture is a graph node, and querying it is refused).
TEST(CudaCaptureRules, ABlockFreedDuringACaptureWaitsForTheCapturingStreamsWork) {
  const Stream side = cuda().getNewStream(0);
  DataPtr block;
  {
    StreamGuard onSide(side);
    block = cuda().getDeviceAllocator(0).allocate(kMiB);
  }
  void* const used = block.get();
  const Stream capturing = cuda().getNewStream(0);
  StreamGuard guard(capturing);
  StreamGate busy(nativeStream(capturing));  // work queued before the capture
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  ASSERT_TRUE(memory::recordStreamUse(block, capturing));
  block = DataPtr();
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph));
  {
    StreamGuard onSide(side);
    DataPtr again = cuda().getDeviceAllocator(0).allocate(kMiB);
    EXPECT_NE(again.get(), used) << "reused before the capturing stream's work was done";
  }
  busy.open();
  cuda().synchronizeStream(capturing);
  cuda().graphDestroy(graph);
}

// Another thread frees cached segments in the moment a capture begins:
// the allocator already counts the capture as underway (cudaFree would be
// prohibited by the Global capture and invalidate it).
TEST(CudaCaptureRules, FreeingCacheAsACaptureBeginsLeavesTheCaptureValid) {
  { DataPtr cached = cuda().getDeviceAllocator(0).allocate(8 * kMiB); }
  StreamGuard guard(cuda().getNewStream(0));
  cuda_double_after_next_capture_begins(
      [](void*) { std::thread([] { cuda().emptyCache(); }).join(); }, nullptr);
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph, {}, CaptureMode::Global);
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph)) << "the capture was invalidated";
  cuda().graphDestroy(graph);
  EXPECT_EQ(cuda_double_active_captures(), 0);
}

// The other order: another thread begins a Global capture after the
// allocator saw none underway and before its cudaFree. The capture waits
// for the free (a prohibited call once the capture has begun, which would
// invalidate it). The double runs the other thread inside that cudaFree and
// gives its capture up to half a second to begin; the capture ends only after
// the free returned, so that the free lands inside it if it began.
TEST(CudaCaptureRules, ACaptureBegunAsTheCacheFreesASegmentWaitsForTheFree) {
  struct Race {
    std::thread capturing;
    std::mutex mutex;
    std::condition_variable changed;
    bool freed = false;
    bool invalidated = false;
  } race;
  { DataPtr cached = cuda().getDeviceAllocator(0).allocate(8 * kMiB); }
  cuda_double_before_next_free(
      [](void* arg) {
        auto& r = *static_cast<Race*>(arg);
        r.capturing = std::thread([&r] {
          StreamGuard guard(cuda().getNewStream(0));
          const GraphId graph = cuda().graphCreate();
          cuda().graphCaptureBegin(graph, {}, CaptureMode::Global);
          {
            std::unique_lock lock(r.mutex);
            r.changed.wait(lock, [&] { return r.freed; });
          }
          try {
            cuda().graphCaptureEnd(graph);
          } catch (const Error&) {
            r.invalidated = true;
          }
          cuda().graphDestroy(graph);
        });
        for (int ms = 0; ms < 500 && cuda_double_active_captures() == 0; ++ms)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      &race);
  cuda().emptyCache();
  {
    std::lock_guard lock(race.mutex);
    race.freed = true;
  }
  race.changed.notify_all();
  ASSERT_TRUE(race.capturing.joinable()) << "the cache freed no segment with cudaFree";
  race.capturing.join();
  EXPECT_FALSE(race.invalidated) << "the free landed inside the capture";
  EXPECT_EQ(cuda_double_active_captures(), 0);
}

// Expandable segments' pages freed during a capture are unmapped only after
// the work queued before that still uses them (cuMemUnmap does not wait, and
// synchronising is prohibited during the capture).
TEST(CudaCaptureRules, PagesFreedDuringACaptureAreUnmappedAfterTheirWork) {
  memory::CachingAllocator& allocator = deviceCache();
  const memory::AllocatorSettings before = allocator.settings();
  memory::AllocatorSettings expandable = before;
  expandable.expandable_segments = true;
  allocator.setSettings(expandable);
  const Stream stream = cuda().getNewStream(0);
  const Stream capturing = cuda().getNewStream(0);
  {
    StreamGate busy(nativeStream(stream));
    {
      StreamGuard guard(stream);
      DataPtr block = cuda().getDeviceAllocator(0).allocate(4 * kMiB);
      accel::fillUniform(stream, static_cast<float*>(block.get()), kMiB);
    }  // freed on its own stream: its fill still queued behind the gate
    StreamGuard guard(capturing);
    const GraphId graph = cuda().graphCreate();
    cuda().graphCaptureBegin(graph);
    cuda().emptyCache();
    busy.open();
    cuda().synchronizeStream(stream);
    EXPECT_NO_THROW(cuda().graphCaptureEnd(graph));
    cuda().graphDestroy(graph);
  }
  int count = 0;
  const std::string text = lastViolation(&count);
  EXPECT_EQ(count, 0) << text;
  cuda().emptyCache();
  EXPECT_EQ(detail::pageMapping().mappedPages(), 0u)
      << "the deferred pages stayed mapped";
  allocator.setSettings(before);
}

// A segment's tail pages freed during a capture wait for the capture's end;
// when the segment grows into them again meanwhile, they are taken back as
// they are (still mapped), and the end of the capture leaves them mapped.
TEST(CudaCaptureRules, PagesMappedAgainDuringACaptureAreTakenBackAsTheyAre) {
  memory::CachingAllocator& allocator = deviceCache();
  const memory::AllocatorSettings before = allocator.settings();
  memory::AllocatorSettings expandable = before;
  expandable.expandable_segments = true;
  allocator.setSettings(expandable);
  cuda().emptyCache();
  const Stream stream = cuda().getNewStream(0);
  const Stream capturing = cuda().getNewStream(0);
  DataPtr head;
  void* tail = nullptr;
  {
    StreamGuard guard(stream);
    head = cuda().getDeviceAllocator(0).allocate(2 * kMiB);
    DataPtr freed = cuda().getDeviceAllocator(0).allocate(4 * kMiB);
    tail = freed.get();
  }
  const std::size_t mapped = detail::pageMapping().mappedPages();
  StreamGuard guard(capturing);
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  cuda().emptyCache();  // the tail's pages: unmapped after the capture
  EXPECT_EQ(detail::pageMapping().mappedPages(), mapped) << "unmapped during the capture";
  DataPtr again;
  {
    StreamGuard onStream(stream);
    again = cuda().getDeviceAllocator(0).allocate(4 * kMiB);
  }
  EXPECT_EQ(again.get(), tail) << "the segment did not grow into its freed tail";
  accel::fillUniform(stream, static_cast<float*>(again.get()), kMiB);
  cuda().synchronizeStream(stream);
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph));
  cuda().graphDestroy(graph);
  EXPECT_EQ(detail::pageMapping().mappedPages(), mapped)
      << "the capture's end unmapped pages in use again";
  accel::fillUniform(stream, static_cast<float*>(again.get()), kMiB);  // still mapped
  cuda().synchronizeStream(stream);
  again = DataPtr();
  head = DataPtr();
  cuda().emptyCache();
  EXPECT_EQ(detail::pageMapping().mappedPages(), 0u);
  allocator.setSettings(before);
}

// A capture begun directly with cudaStreamBeginCapture on a wrapped stream
// is unknown to the backend; the allocator's new segment must not
// invalidate it all the same.
TEST(CudaCaptureRules, ACaptureBegunWithCudaSurvivesASegmentAllocation) {
  cuda().emptyCache();
  cudaStream_t mine = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), cudaSuccess);
  StreamGuard guard(wrapExternalStream(mine, 0));
  ASSERT_EQ(cudaStreamBeginCapture(mine, cudaStreamCaptureModeGlobal), cudaSuccess);
  DataPtr block;
  EXPECT_NO_THROW(block = cuda().getDeviceAllocator(0).allocate(40 * kMiB));
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(mine, &graph), cudaSuccess)
      << "the capture was invalidated";
  if (graph != nullptr) {
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  }
  block = DataPtr();
  EXPECT_EQ(cudaStreamSynchronize(mine), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(mine), cudaSuccess);
}

// Captured into a graph: every replay waits here until the test opens it.
// Replays share it (nothing is freed when it runs).
struct ReplayGate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int waiting = 0;
  std::vector<std::vector<float>> seen;  // the fill's outputs, per replay
  float* out = nullptr;
  std::size_t count = 0;

  static void wait(void* data) {
    auto& gate = *static_cast<ReplayGate*>(data);
    std::unique_lock lock(gate.mutex);
    ++gate.waiting;
    gate.changed.notify_all();
    gate.changed.wait(lock, [&] { return gate.open; });
  }
  static void keep(void* data) {
    auto& gate = *static_cast<ReplayGate*>(data);
    std::lock_guard lock(gate.mutex);
    gate.seen.emplace_back(gate.out, gate.out + gate.count);
  }
  int waiters() {
    std::lock_guard lock(mutex);
    return waiting;
  }
  void openAll() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
};

// A graph with captured fills replayed on one stream, then on another
// without synchronising: the second replay's Philox position must not
// reach the shared slot before the first replay's fill read it, or both
// replays draw the same numbers.
TEST(CudaCaptureRules, ReplaysOnTwoStreamsDrawEachTheirOwnNumbers) {
  constexpr std::size_t kCount = 64;
  constexpr std::uint64_t kSeed = 29;
  const Stream first = cuda().getNewStream(0);
  const Stream second = cuda().getNewStream(0);
  ReplayGate gate;
  gate.count = kCount;
  // The core's fills write memory of its device cache only.
  const DataPtr out = cuda().getDeviceAllocator(0).allocate(kCount * sizeof(float));
  gate.out = static_cast<float*>(out.get());
  Generator generator = makePhiloxGenerator(Device(DeviceType::CUDA, 0), kSeed);
  const GraphId graph = cuda().graphCreate();
  {
    StreamGuard guard(cuda().getNewStream(0));
    const Stream stream = cuda().getCurrentStream(0);
    cuda().graphCaptureBegin(graph);
    ASSERT_EQ(cudaLaunchHostFunc(nativeStream(stream), &ReplayGate::wait, &gate),
              cudaSuccess);
    accel::fillUniform(stream, gate.out, kCount, 0.f, 1.f, generator);
    ASSERT_EQ(cudaLaunchHostFunc(nativeStream(stream), &ReplayGate::keep, &gate),
              cudaSuccess);
    cuda().graphCaptureEnd(graph);
  }
  {
    StreamGuard guard(first);
    cuda().graphReplay(graph);
  }
  {
    StreamGuard guard(second);
    cuda().graphReplay(graph);
  }
  // The first replay holds at its gate (its position written); the second
  // either wrote its position and holds at the gate too, or waits for the
  // first replay.
  while (gate.waiters() < 1) std::this_thread::yield();
  while (gate.waiters() < 2 &&
         cuda_double_stream_waits_for_event(nativeStream(second)) == 0)
    std::this_thread::yield();
  gate.openAll();
  cuda().synchronizeStream(first);
  cuda().synchronizeStream(second);
  ASSERT_EQ(gate.seen.size(), 2u);
  std::vector<float> expected(kCount);
  for (std::size_t replay = 0; replay < 2; ++replay) {
    accel::fillUniform(std::span(expected), PhiloxPosition{kSeed, replay * kCount});
    EXPECT_EQ(
        std::memcmp(gate.seen[replay].data(), expected.data(), kCount * sizeof(float)), 0)
        << "replay " << replay << " did not draw its own numbers";
  }
  cuda().graphDestroy(graph);
}

}  // namespace
}  // namespace accel::cuda::testing
