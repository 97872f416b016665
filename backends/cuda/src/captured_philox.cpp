#include "captured_philox.h"

#include <map>
#include <mutex>
#include <utility>

#include "accel/adapter/failure.h"
#include "accel/philox_generator.h"
#include "capture_deferrals.h"
#include "capture_registry.h"
#include "cuda_error.h"
#include "cuda_memory.h"
#include "cxx_boundary.h"
#include "fill_kernels.h"

namespace accel::cuda::detail {
namespace {

// The backend's captures underway, by CUDA's capture id. Shared with the
// fills that claim from them, which may outlast the entry by a moment.
struct Captures {
  std::mutex mutex;
  std::map<unsigned long long, std::shared_ptr<kit::CapturedPhilox>> by_id;
};

Captures& captures() {
  static Captures* const all = new Captures();  // never destroyed
  return *all;
}

// The graph of capture `id`, or null when the backend did not begin it.
std::shared_ptr<kit::CapturedPhilox> capturedGraph(unsigned long long id) {
  Captures& all = captures();
  std::lock_guard lock(all.mutex);
  auto found = all.by_id.find(id);
  return found == all.by_id.end() ? nullptr : found->second;
}

}  // namespace

void advanceCapturedPhilox(kit::CapturedPhilox& graph, cudaStream_t stream) {
  graph.advance([stream](void* slot, PhiloxPosition from) {
    checkCuda(launchWritePhilox(static_cast<std::uint64_t*>(slot), from.seed, from.offset,
                                stream),
              "a graph replay's Philox position (kernel launch)");
  });
}

void capturedPhiloxBegan(unsigned long long capture_id) {
  auto graph = std::make_shared<kit::CapturedPhilox>();
  Captures& all = captures();
  std::lock_guard lock(all.mutex);
  all.by_id[capture_id] = std::move(graph);
}

std::shared_ptr<kit::CapturedPhilox> capturedPhiloxEnded(
    unsigned long long capture_id) noexcept {
  std::shared_ptr<kit::CapturedPhilox> taken;
  {
    Captures& all = captures();
    std::lock_guard lock(all.mutex);
    auto found = all.by_id.find(capture_id);
    if (found == all.by_id.end()) return nullptr;
    taken = std::move(found->second);
    all.by_id.erase(found);
  }
  if (taken->empty()) return nullptr;
  return taken;
}

const std::uint64_t* claimFillPosition(cudaStream_t native, adapter::Stream stream,
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
  const std::shared_ptr<kit::CapturedPhilox> graph =
      status == cudaStreamCaptureStatusActive ? capturedGraph(id) : nullptr;
  if (graph == nullptr) {
    claimNow();
    return nullptr;
  }
  // A new slot comes from the capture's private pool (routed by capture;
  // allocated in Relaxed mode when a segment is needed): kept until the
  // graph is reset. The kit allocates without its lock: the allocator may
  // call back into the capture registry.
  const kit::CapturedPhilox::Position at = graph->claim(generator, outputs, [&] {
    routeToCapturePool(stream.device, toLibrary(stream));
    return deviceCachingAllocator().allocate(
        stream.device, kit::CapturedPhilox::kSlotBytes, toLibrary(stream));
  });
  ACCEL_ADAPTER_CHECK(capturedGraph(id) == graph, adapter::InvalidArgument,
                      "a fill captured on cuda:", static_cast<int>(stream.device),
                      ": the capture ended while the fill was enqueued");
  *offset = at.offset;
  return at.slot;
}

}  // namespace accel::cuda::detail
