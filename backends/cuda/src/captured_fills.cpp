#include "captured_fills.h"

#include <utility>

#include "accel/adapter/failure.h"
#include "capture_deferrals.h"
#include "cuda_error.h"
#include "device_memory.h"
#include "fill_kernels.h"

namespace accel::cuda::detail {
namespace {

constexpr std::size_t kSlotWords = 2;  // seed, then offset

// The backend's captures underway, by CUDA's capture id. Shared with the
// fills that claim from them, which may outlast the entry by a moment.
struct Captures {
  std::mutex mutex;
  std::map<unsigned long long, std::shared_ptr<CapturedFills>> by_id;
};

Captures& captures() {
  static Captures* const all = new Captures();  // never destroyed
  return *all;
}

// The fills of capture `id`, or null when the backend did not begin it.
std::shared_ptr<CapturedFills> capturedGraph(unsigned long long id) {
  Captures& all = captures();
  std::lock_guard lock(all.mutex);
  auto found = all.by_id.find(id);
  return found == all.by_id.end() ? nullptr : found->second;
}

}  // namespace

CapturedFills::~CapturedFills() {
  // Freed after the captures underway end (device_memory.h), and after
  // the graph's replays: a graph is reset or destroyed once its work is
  // done (docs/cuda.md, "Graphs").
  for (std::uint64_t* chunk : chunks_) {
    deviceMemory().free(device_, chunk, kSlotsPerChunk * kSlotWords * sizeof *chunk);
  }
}

const std::uint64_t* CapturedFills::claim(const adapter::Core& core,
                                          accel_generator* generator,
                                          std::uint64_t outputs) {
  std::shared_ptr<const adapter::PhiloxPosition> position =
      draws_.claim(core, generator, outputs);
  try {
    std::lock_guard lock(mutex_);
    if (used_in_last_ == kSlotsPerChunk) {
      chunks_.reserve(chunks_.size() + 1);
      constexpr std::size_t bytes = kSlotsPerChunk * kSlotWords * sizeof(std::uint64_t);
      void* chunk = deviceMemory().allocate(device_, bytes);
      ACCEL_ADAPTER_CHECK(chunk != nullptr, adapter::OutOfMemory,
                          "cuda:", static_cast<int>(device_), " has no room for ", bytes,
                          " bytes of captured fills' Philox positions");
      chunks_.push_back(static_cast<std::uint64_t*>(chunk));
      used_in_last_ = 0;
    }
    std::uint64_t* slot = chunks_.back() + used_in_last_ * kSlotWords;
    slots_.emplace(position.get(), Slot{position, slot});
    ++used_in_last_;
    return slot;
  } catch (...) {
    draws_.unclaim(position);
    throw;
  }
}

void CapturedFills::unclaim(const std::uint64_t* slot) noexcept {
  std::shared_ptr<const adapter::PhiloxPosition> position;
  {
    std::lock_guard lock(mutex_);
    for (auto it = slots_.begin(); it != slots_.end(); ++it) {
      if (it->second.words == slot) {
        position = std::move(it->second.position);
        slots_.erase(it);
        break;
      }
    }
  }
  // The slot's two words stay in their chunk, unused, until the graph goes.
  if (position) draws_.unclaim(position);
}

void CapturedFills::advance(const adapter::Core& core, cudaStream_t stream) {
  PhiloxWrites writes;
  const auto flush = [&] {
    checkCuda(launchWritePhilox(writes, stream),
              "a graph replay's Philox positions (kernel launch)");
    writes.count = 0;
  };
  for (const auto& [position, from] : draws_.advance(core)) {
    {
      std::lock_guard lock(mutex_);
      writes.slot[writes.count] = slots_.at(position.get()).words;
    }
    writes.seed[writes.count] = from.seed;
    writes.offset[writes.count] = from.offset;
    if (++writes.count == PhiloxWrites::kMax) flush();
  }
  flush();
}

void capturedFillsBegan(unsigned long long capture_id, std::int8_t device) {
  auto graph = std::make_shared<CapturedFills>(device);
  Captures& all = captures();
  std::lock_guard lock(all.mutex);
  all.by_id[capture_id] = std::move(graph);
}

std::shared_ptr<CapturedFills> capturedFillsEnded(
    unsigned long long capture_id) noexcept {
  std::shared_ptr<CapturedFills> taken;
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

const std::uint64_t* claimFillPosition(const adapter::Core& core, cudaStream_t native,
                                       adapter::Stream stream, accel_generator* generator,
                                       std::uint64_t outputs,
                                       adapter::PhiloxPosition* from) {
  // Every uncaptured fill passes here: while the backend has no capture
  // underway (captures begin in captureBegin, before any fill is captured,
  // on the thread that captures), neither CUDA is asked nor the lock taken.
  if (!capturesUnderway()) [[likely]] {
    *from = core.reservePhilox(generator, outputs);
    return nullptr;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  checkCuda(cudaStreamGetCaptureInfo(native, &status, &id), "cudaStreamGetCaptureInfo");
  const std::shared_ptr<CapturedFills> graph =
      status == cudaStreamCaptureStatusActive ? capturedGraph(id) : nullptr;
  if (graph == nullptr) {
    *from = core.reservePhilox(generator, outputs);
    return nullptr;
  }
  const std::uint64_t* slot = graph->claim(core, generator, outputs);
  if (capturedGraph(id) != graph) {
    graph->unclaim(slot);
    throw adapter::InvalidArgument(
        adapter::concat("a fill captured on cuda:", static_cast<int>(stream.device),
                        ": the capture ended while the fill was enqueued"));
  }
  *from = {};
  return slot;
}

}  // namespace accel::cuda::detail
