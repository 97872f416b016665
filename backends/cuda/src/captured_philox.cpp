#include "captured_philox.h"

#include <map>
#include <mutex>

#include "accel/error.h"
#include "accel/philox_generator.h"
#include "capture_registry.h"
#include "cuda_error.h"
#include "cuda_memory.h"
#include "fill_kernels.h"

namespace accel::cuda::detail {
namespace {

struct Captures {
  std::mutex mutex;
  std::map<unsigned long long, CapturedPhilox> by_id;
};

Captures& captures() {
  static Captures* const all = new Captures();  // never destroyed
  return *all;
}

constexpr std::size_t kSlotBytes = 2 * sizeof(std::uint64_t);

CapturedPhilox::Slot* findSlot(CapturedPhilox& graph, const Generator& generator) {
  for (CapturedPhilox::Slot& slot : graph.slots_) {
    if (slot.generator == generator) return &slot;
  }
  return nullptr;
}

}  // namespace

void CapturedPhilox::advance(cudaStream_t stream) {
  for (Slot& slot : slots_) {
    const PhiloxPosition from = reservePhilox(slot.generator, slot.outputs);
    checkCuda(launchWritePhilox(static_cast<std::uint64_t*>(slot.state.get()), from.seed,
                                from.offset, stream),
              "a graph replay's Philox position (kernel launch)");
  }
}

void capturedPhiloxBegan(unsigned long long capture_id) {
  Captures& all = captures();
  std::lock_guard lock(all.mutex);
  all.by_id[capture_id];
}

CapturedPhilox capturedPhiloxEnded(unsigned long long capture_id) noexcept {
  Captures& all = captures();
  std::lock_guard lock(all.mutex);
  auto found = all.by_id.find(capture_id);
  if (found == all.by_id.end()) return {};
  CapturedPhilox taken = std::move(found->second);
  all.by_id.erase(found);
  return taken;
}

const std::uint64_t* claimFillPosition(cudaStream_t native, Stream stream,
                                       const Generator& generator, std::uint64_t outputs,
                                       std::uint64_t* seed, std::uint64_t* offset) {
  const auto claimNow = [&] {
    const PhiloxPosition from = reservePhilox(generator, outputs);
    *seed = from.seed;
    *offset = from.offset;
  };
  // Every uncaptured fill passes here: while the backend has no capture
  // underway (captures begin in graphCaptureBegin, before any fill is
  // captured, on the thread that captures), neither CUDA is asked nor the
  // lock taken.
  if (!capturesUnderway()) [[likely]] {
    claimNow();
    return nullptr;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  checkCuda(cudaStreamGetCaptureInfo(native, &status, &id), "cudaStreamGetCaptureInfo");
  if (status != cudaStreamCaptureStatusActive) {
    claimNow();
    return nullptr;
  }
  Captures& all = captures();
  std::unique_lock lock(all.mutex);
  auto capture = all.by_id.find(id);
  if (capture == all.by_id.end()) {
    lock.unlock();
    claimNow();
    return nullptr;
  }
  CapturedPhilox::Slot* slot = findSlot(capture->second, generator);
  if (slot == nullptr) {
    // From the capture's private pool (routed by capture; allocated in
    // Relaxed mode when a segment is needed): kept until the graph is reset.
    // Allocated without the lock (the allocator may call back into the
    // capture registry); a fill racing on the same generator may have made
    // the slot meanwhile, and this memory then goes back.
    lock.unlock();
    routeToCapturePool(stream.device.index(), stream);
    DataPtr state =
        deviceCachingAllocator().allocate(stream.device.index(), kSlotBytes, stream);
    lock.lock();
    capture = all.by_id.find(id);
    ACCEL_CHECK(capture != all.by_id.end(), InvalidArgument, "a fill captured on ",
                stream.device.str(), ": the capture ended while the fill was enqueued");
    slot = findSlot(capture->second, generator);
    if (slot == nullptr) {
      capture->second.slots_.push_back({generator, std::move(state), 0});
      slot = &capture->second.slots_.back();
    }
  }
  *offset = slot->outputs;
  slot->outputs += outputs;
  return static_cast<const std::uint64_t*>(slot->state.get());
}

}  // namespace accel::cuda::detail
