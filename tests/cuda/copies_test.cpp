// The copies group and the thread's runtime state on the runtime double:
// what the contract promises where CUDA allows more than one behaviour.
// Run twice by ctest: as CUDA usually behaves (pageable copies synchronous),
// and with CUDA_DOUBLE_PAGEABLE_ASYNC=1, where pageable copies and cudaMemset
// return before they ran, as CUDA's text allows.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "double_support.h"

namespace accel::cuda::testing {
namespace {

constexpr std::size_t kBlock = 512;  // two such blocks share a segment

// Runs `copy` while `stream` is held by a gate, which opens once the copy
// waits for the stream or has returned; `after` runs between the copy's
// return and the gate's opening (what a program does with its buffer then).
template <typename Copy, typename After>
void copyBehindAGate(Stream stream, Copy copy, After after) {
  StreamGate busy(nativeStream(stream));
  std::atomic<bool> returned{false};
  std::thread opener([&] {
    while (!returned.load() && cuda_double_waiting_threads() == 0)
      std::this_thread::yield();
    busy.open();
  });
  copy();
  after();
  returned.store(true);
  opener.join();
}

// The contract: a copy from pageable memory returns once the source may be
// reused. Where CUDA returns before reading it, the backend must wait.
TEST(CudaCopies, APageableSourceMayBeReusedWhenTheCopyReturns) {
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  DataPtr block = cuda().getDeviceAllocator(0).allocate(kBlock);
  std::vector<unsigned char> source(kBlock, 0x11);
  copyBehindAGate(
      stream,
      [&] { cuda().copyHostToDevice(block.get(), source.data(), kBlock, stream); },
      [&] { std::memset(source.data(), 0x22, kBlock); });
  cuda().synchronizeStream(stream);
  const auto* copied = static_cast<const unsigned char*>(block.get());
  EXPECT_EQ(copied[0], 0x11) << "the copy read the source after it returned";
  EXPECT_EQ(copied[kBlock - 1], 0x11);
}

// The contract: a copy to pageable memory returns once the destination is
// filled.
TEST(CudaCopies, APageableDestinationIsFilledWhenTheCopyReturns) {
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  DataPtr block = cuda().getDeviceAllocator(0).allocate(kBlock);
  std::memset(block.get(), 0x33, kBlock);  // device memory is host memory here
  std::vector<unsigned char> destination(kBlock, 0);
  unsigned char seen = 0;
  copyBehindAGate(
      stream,
      [&] { cuda().copyDeviceToHost(destination.data(), block.get(), kBlock, stream); },
      [&] { seen = destination[kBlock - 1]; });
  cuda().synchronizeStream(stream);
  EXPECT_EQ(seen, 0x33) << "the destination was not filled when the copy returned";
}

// docs/hooks.md: a copy past the end of its block is InvalidArgument, and
// the neighbouring block of the segment is left as it was.
TEST(CudaCopies, ACopyLongerThanItsBlockIsRefusedAndLeavesTheNeighbourIntact) {
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  DataPtr first = cuda().getDeviceAllocator(0).allocate(kBlock);
  DataPtr second = cuda().getDeviceAllocator(0).allocate(kBlock);
  auto* const low =
      static_cast<unsigned char*>(std::min(first.get(), second.get(), std::less<>()));
  unsigned char* const high = low == first.get()
                                  ? static_cast<unsigned char*>(second.get())
                                  : static_cast<unsigned char*>(first.get());
  std::memset(high, 0x5A, kBlock);
  const std::vector<unsigned char> source(4 * kBlock, 0xEE);
  EXPECT_THROW(cuda().copyHostToDevice(low, source.data(), source.size(), stream),
               InvalidArgument);
  cuda().synchronizeStream(stream);
  for (std::size_t i = 0; i < kBlock; ++i) {
    ASSERT_EQ(high[i], 0x5A) << "byte " << i << " of the neighbouring block changed";
  }
}

// docs/hooks.md: a copy into a freed block (cached by the allocator, still
// CUDA's memory) is InvalidArgument.
TEST(CudaCopies, ACopyIntoAFreedBlockIsRefused) {
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  void* freed = nullptr;
  {
    DataPtr block = cuda().getDeviceAllocator(0).allocate(kBlock);
    freed = block.get();
  }
  const std::vector<unsigned char> source(kBlock, 0xEE);
  EXPECT_THROW(cuda().copyHostToDevice(freed, source.data(), kBlock, stream),
               InvalidArgument);
}

// docs/hooks.md: pinned memory the core's pinned cache did not hand out is
// safe to free once the copy returns because the call synchronises the
// stream, which a capture forbids (it would invalidate the capture). On a
// capturing stream such a copy is refused before anything is enqueued, and
// the capture stays valid; memory of the backend's pinned allocator (whose
// block the core holds for the copy) is captured.
TEST(CudaCopies, PinnedMemoryFromElsewhereIsRefusedOnACapturingStream) {
  const Stream stream = cuda().getNewStream(0);
  StreamGuard guard(stream);
  DataPtr block = cuda().getDeviceAllocator(0).allocate(kBlock);
  void* foreign = nullptr;
  ASSERT_EQ(cudaHostAlloc(&foreign, kBlock, cudaHostAllocDefault), cudaSuccess);
  ASSERT_TRUE(cuda().isPinnedPtr(foreign));
  DataPtr own = cuda().getPinnedMemoryAllocator().allocate(kBlock);
  const GraphId graph = cuda().graphCreate();
  cuda().graphCaptureBegin(graph);
  try {
    cuda().copyHostToDevice(block.get(), foreign, kBlock, stream);
    ADD_FAILURE() << "the copy from cudaHostAlloc memory was not refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("capturing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(hookInfo(HookId::getPinnedMemoryAllocator).name),
              std::string::npos)
        << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not InvalidArgument: " << e.what();
  }
  EXPECT_THROW(cuda().copyDeviceToHost(foreign, block.get(), kBlock, stream),
               InvalidArgument);
  EXPECT_NO_THROW(cuda().copyHostToDevice(block.get(), own.get(), kBlock, stream));
  EXPECT_NO_THROW(cuda().graphCaptureEnd(graph)) << "the capture was invalidated";
  cuda().graphDestroy(graph);
  // Outside a capture the same memory is copied (the call waits for it).
  std::memset(foreign, 0x5A, kBlock);
  cuda().copyHostToDevice(block.get(), foreign, kBlock, stream);
  std::vector<unsigned char> back(kBlock, 0);
  cuda().copyDeviceToHost(back.data(), block.get(), kBlock, stream);
  EXPECT_EQ(back[kBlock - 1], 0x5A);
  ASSERT_EQ(cudaFreeHost(foreign), cudaSuccess);
}

// The backend's work on another device leaves the thread's runtime device
// as it was: the program's next plain runtime call goes where it went before.
TEST(CudaThreadState, WorkOnAnotherDeviceLeavesTheRuntimesDeviceAlone) {
  ASSERT_GE(cuda().deviceCount(), 2);
  std::thread([] {
    // A thread that never chose a device: the runtime's device is 0.
    const EventId event = cuda().createEvent(1);
    const Stream stream = cuda().getNewStream(1);
    cuda().recordEvent(event, stream);
    cuda().destroyEvent(event);
    int device = -1;
    ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
    EXPECT_EQ(device, 0) << "work on cuda:1 switched the thread's runtime device";
  }).join();
}

}  // namespace
}  // namespace accel::cuda::testing
