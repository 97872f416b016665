// Shared by the tests of the backend on the runtime double: the backend, a
// gate that holds a stream's queued work until the test opens it, and the
// check that the double recorded no violation (misuse a GPU reports only as
// a later fault).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "accel/accel.h"
#include "accel/cuda/cuda.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "cuda_double.h"

namespace accel::cuda::testing {

inline AcceleratorHooks& cuda() { return registerBackend(); }

// The core's caches behind the cuda hooks: the device cache found through a
// block it hands out, the pinned cache as the pinned allocator it is.
inline memory::CachingAllocator& deviceCache() {
  const DataPtr probe = cuda().getDeviceAllocator(0).allocate(1);
  memory::CachingAllocator* cache = memory::CachingAllocator::owning(probe);
  if (cache == nullptr)
    throw std::logic_error("cuda's device memory is not the core's cache");
  return *cache;
}
inline memory::PinnedCachingAllocator& pinnedCache() {
  return dynamic_cast<memory::PinnedCachingAllocator&>(cuda().getPinnedMemoryAllocator());
}

// Holds `stream`: work enqueued after the gate waits until open() (or the
// gate's destruction). A host function on the stream, as a kernel that has
// not finished yet.
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t stream) : state_(std::make_shared<State>()) {
    auto* held = new std::shared_ptr<State>(state_);
    EXPECT_EQ(cudaLaunchHostFunc(stream, &wait, held), cudaSuccess);
  }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  ~StreamGate() { open(); }

  void open() {
    std::lock_guard lock(state_->mutex);
    state_->open = true;
    state_->opened.notify_all();
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable opened;
    bool open = false;
  };
  static void wait(void* data) {
    std::unique_ptr<std::shared_ptr<State>> held(
        static_cast<std::shared_ptr<State>*>(data));
    State& state = **held;
    std::unique_lock lock(state.mutex);
    state.opened.wait(lock, [&] { return state.open; });
  }
  std::shared_ptr<State> state_;
};

// The violations recorded since the last reset, with the last one's text.
inline std::string lastViolation(int* count) {
  char text[512] = {};
  *count = cuda_double_violations(text, sizeof text);
  return text;
}

}  // namespace accel::cuda::testing
