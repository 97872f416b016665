// SynchronousCachingHooks: per-device allocators over the caching allocator
// and graph capture for a synchronous device (see the header).
#include "accel/kit/synchronous_caching_hooks.h"

#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "accel/error.h"
#include "accel/hook_catalogue.h"

namespace accel::kit {

// A device's first allocation marks it used (hasPrimaryContext), then turns
// its allocator's fast path on: later allocations go straight to the cache.
class SynchronousCachingHooks::FirstUse final : public CachingDeviceAllocator::Detour {
 public:
  explicit FirstUse(SynchronousCachingHooks& hooks) : hooks_(hooks) {}
  DataPtr allocate(CachingDeviceAllocator& allocator, std::size_t bytes) override {
    hooks_.markDeviceUsed(allocator.device().index());
    allocator.setDiverted(false);
    return allocator.allocateFromCache(bytes);
  }

 private:
  SynchronousCachingHooks& hooks_;
};

SynchronousCachingHooks::SynchronousCachingHooks(DeviceType type,
                                                 Capabilities capabilities,
                                                 int device_count)
    : CachingAllocatorHooks(type, capabilities, device_count),
      first_use_(std::make_unique<FirstUse>(*this)) {}

SynchronousCachingHooks::~SynchronousCachingHooks() = default;

Allocator& SynchronousCachingHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  // Made on first use: cachingAllocator() belongs to the subclass, which is
  // not constructed yet while this constructor runs.
  std::call_once(allocators_made_, [this] {
    std::vector<std::unique_ptr<CachingDeviceAllocator>> made;
    for (int i = 0; i < deviceCount(); ++i) {
      made.push_back(std::make_unique<CachingDeviceAllocator>(
          cachingAllocator(), static_cast<DeviceIndex>(i), current(), first_use_.get(),
          /*diverted=*/true));
    }
    allocators_ = std::move(made);
  });
  return *allocators_[static_cast<std::size_t>(index)];
}

void SynchronousCachingHooks::launch(Stream stream, std::function<void()> work) {
  requireKnownStream(stream, HookId::graphCaptureBegin);
  if (!record(stream, work)) work();
}

bool SynchronousCachingHooks::record(Stream stream, std::function<void()>& work) {
  if (captures_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(graph_mutex_);
  const GraphId id = capturing(stream);
  if (id == 0) return false;
  graphs_.at(id).work.push_back(std::move(work));
  return true;
}

// ---- what a capture forbids ----

GraphId SynchronousCachingHooks::capturing(Stream stream) const {
  for (const auto& [id, g] : graphs_) {
    if (g.phase == Phase::Capturing && g.stream == stream) return id;
  }
  return 0;
}

void SynchronousCachingHooks::refuseOnCapturingStream(Stream stream, HookId hook) const {
  if (captures_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(graph_mutex_);
  const GraphId id = capturing(stream);
  if (id == 0) return;
  const std::string why = accel::detail::concat(
      hookInfo(hook).name, "(): stream ", stream, " of '", name(),
      "' is being captured by graph ", id,
      "; a capturing stream cannot be waited for or queried (its work runs at "
      "replay)");
  Graph& g = graphs_.at(id);
  if (g.invalidated.empty()) g.invalidated = why;
  throw DeviceError(accel::detail::concat(
      why, ". The capture is invalidated: ", hookInfo(HookId::graphCaptureEnd).name,
      "() will discard it"));
}

void SynchronousCachingHooks::refuseEventOnCapturingStream(Stream stream,
                                                           HookId hook) const {
  if (captures_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(graph_mutex_);
  const GraphId id = capturing(stream);
  ACCEL_CHECK(id == 0, NotSupported, hookInfo(hook).name, "(): '", name(),
              "' does not support events on a capturing stream (stream ", stream,
              " is being captured by graph ", id,
              "; a capture holds one stream): use events outside the capture");
}

void SynchronousCachingHooks::deviceSynchronizeImpl(DeviceIndex index) {
  enter(HookId::deviceSynchronize);
  if (captures_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(graph_mutex_);
  for (auto& [id, g] : graphs_) {
    if (g.phase != Phase::Capturing || g.stream.device.index() != index) continue;
    const bool forbidden =
        g.mode == CaptureMode::Global ||
        (g.mode == CaptureMode::ThreadLocal && g.thread == std::this_thread::get_id());
    if (!forbidden) continue;
    const std::string why = accel::detail::concat(
        hookInfo(HookId::deviceSynchronize).name, "(", int(index), "): graph ", id,
        " of '", name(), "' is capturing stream ", g.stream, " in ",
        g.mode == CaptureMode::Global ? "Global" : "ThreadLocal",
        " mode, which forbids waiting for the device (capture in Relaxed mode "
        "to allow it)");
    if (g.invalidated.empty()) g.invalidated = why;
    throw DeviceError(accel::detail::concat(
        why, ". The capture is invalidated: ", hookInfo(HookId::graphCaptureEnd).name,
        "() will discard it"));
  }
}

bool SynchronousCachingHooks::queryStreamImpl(Stream stream) const {
  const bool done = SynchronousDeviceHooks::queryStreamImpl(stream);
  refuseOnCapturingStream(stream, HookId::queryStream);
  return done;
}

void SynchronousCachingHooks::synchronizeStreamImpl(Stream stream) const {
  SynchronousDeviceHooks::synchronizeStreamImpl(stream);
  refuseOnCapturingStream(stream, HookId::synchronizeStream);
}

void SynchronousCachingHooks::recordEventImpl(EventId event, Stream stream) {
  refuseEventOnCapturingStream(stream, HookId::recordEvent);
  SynchronousDeviceHooks::recordEventImpl(event, stream);
}

void SynchronousCachingHooks::blockStreamImpl(EventId event, Stream stream) {
  refuseEventOnCapturingStream(stream, HookId::blockStream);
  SynchronousDeviceHooks::blockStreamImpl(event, stream);
}

// ---- copies: recorded on a capturing stream ----

void SynchronousCachingHooks::copy(HookId hook, void* dst, const void* src,
                                   std::size_t bytes, Stream stream) {
  enter(hook);
  checkCopy(hook, dst, src, bytes, stream);
  markDeviceUsed(stream.device.index());
  if (captures_.load(std::memory_order_acquire) != 0) {
    std::function<void()> work = [dst, src, bytes] { std::memcpy(dst, src, bytes); };
    if (record(stream, work)) return;
  }
  std::memcpy(dst, src, bytes);  // the core refused overlapping ranges
}

void SynchronousCachingHooks::copyHostToDeviceImpl(void* dst, const void* src,
                                                   std::size_t bytes, Stream stream) {
  copy(HookId::copyHostToDevice, dst, src, bytes, stream);
}

void SynchronousCachingHooks::copyDeviceToHostImpl(void* dst, const void* src,
                                                   std::size_t bytes, Stream stream) {
  copy(HookId::copyDeviceToHost, dst, src, bytes, stream);
}

void SynchronousCachingHooks::copyDeviceToDeviceImpl(void* dst, const void* src,
                                                     std::size_t bytes, Stream stream) {
  copy(HookId::copyDeviceToDevice, dst, src, bytes, stream);
}

// ---- fill: the host fill into the device's memory, recorded on a
// capturing stream ----

void SynchronousCachingHooks::fillRandomImpl(Stream stream, DeviceFill kind, void* data,
                                             std::size_t count, double a, double b,
                                             const Generator& generator) {
  enter(HookId::fillRandom);
  markDeviceUsed(stream.device.index());
  // The draw is reserved when the work runs: now, or at each replay of the
  // graph that captured it, so that every replay writes new numbers.
  std::function<void()> work = [kind, data, count, a, b, generator] {
    fillHostAddressable(kind, data, count, a, b, generator);
  };
  if (captures_.load(std::memory_order_acquire) != 0 && record(stream, work)) return;
  work();
}

// ---- graphs ----

SynchronousCachingHooks::Graph& SynchronousCachingHooks::graph(
    GraphId id, HookId hook, std::initializer_list<Phase> phases) const {
  auto it = graphs_.find(id);
  ACCEL_CHECK(it != graphs_.end(), InvalidArgument, hookInfo(hook).name, "(): graph ", id,
              " is not a live graph of '", name(), "'; create it with ",
              hookInfo(HookId::graphCreate).name, "()");
  static constexpr std::array<std::string_view, 5> kPhases = {
      "is empty (not captured yet)", "is being captured", "is captured, not instantiated",
      "is instantiated", "was instantiated as its capture ended (no keep_graph)"};
  Phase phase = it->second.phase;
  bool allowed = phases.size() == 0;
  for (Phase p : phases) allowed = allowed || p == phase;
  ACCEL_CHECK(allowed, DeviceError, hookInfo(hook).name, "(): graph ", id, " of '",
              name(), "' ", kPhases[static_cast<std::size_t>(phase)],
              "; a graph is captured (", hookInfo(HookId::graphCaptureBegin).name, ", ",
              hookInfo(HookId::graphCaptureEnd).name,
              "), instantiated (keep_graph only), "
              "replayed; ",
              hookInfo(HookId::graphReset).name, "() empties it");
  return it->second;
}

void SynchronousCachingHooks::releaseGraph(Graph& g) {
  const DeviceIndex device = g.stream.device.index();
  if (g.phase == Phase::Capturing) {
    cachingAllocator().endAllocateToPool(device, g.pool, g.stream);
    captures_.fetch_sub(1, std::memory_order_release);
  }
  if (g.holds_pool) cachingAllocator().releasePool(device, g.pool);
  const bool keep_graph = g.keep_graph;
  g = Graph{};
  g.keep_graph = keep_graph;
}

GraphId SynchronousCachingHooks::graphCreateImpl(bool keep_graph) {
  enter(HookId::graphCreate);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  graphs_[next_graph_].keep_graph = keep_graph;
  return next_graph_++;
}

void SynchronousCachingHooks::graphDestroyImpl(GraphId id) {
  enter(HookId::graphDestroy);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, HookId::graphDestroy);
  releaseGraph(g);
  graphs_.erase(id);
}

void SynchronousCachingHooks::graphCaptureBeginImpl(GraphId id, MempoolId pool,
                                                    CaptureMode mode) {
  enter(HookId::graphCaptureBegin);
  // The current stream of the current device, as CUDA captures.
  const DeviceIndex device = getCurrentDeviceImpl();
  const Stream stream = getCurrentStreamImpl(device);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, HookId::graphCaptureBegin, {Phase::Empty});
  for (const auto& [other_id, other] : graphs_) {
    ACCEL_CHECK(other.phase != Phase::Capturing || other.stream != stream, DeviceError,
                hookInfo(HookId::graphCaptureBegin).name, "(): stream ", stream, " of '",
                name(), "' is already being captured by graph ", other_id,
                "; end that capture first (", hookInfo(HookId::graphCaptureEnd).name,
                ")");
  }
  memory::CachingAllocator& cache = cachingAllocator();
  const MempoolId chosen = pool.isDefault() ? cache.createPool() : pool;
  cache.retainPool(device, chosen);
  try {
    cache.beginAllocateToPool(device, chosen, stream);
  } catch (...) {
    cache.releasePool(device, chosen);
    throw;
  }
  markDeviceUsed(device);
  g.pool = chosen;
  g.holds_pool = true;
  g.stream = stream;
  g.mode = mode;
  g.thread = std::this_thread::get_id();
  g.phase = Phase::Capturing;
  captures_.fetch_add(1, std::memory_order_release);
}

void SynchronousCachingHooks::graphCaptureEndImpl(GraphId id) {
  enter(HookId::graphCaptureEnd);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, HookId::graphCaptureEnd, {Phase::Capturing});
  if (!g.invalidated.empty()) {
    const std::string why = std::move(g.invalidated);
    releaseGraph(g);  // empty again, its pool given back
    throw DeviceError(accel::detail::concat(hookInfo(HookId::graphCaptureEnd).name,
                                            "(): the capture of graph ", id,
                                            " was invalidated and is discarded: ", why));
  }
  cachingAllocator().endAllocateToPool(g.stream.device.index(), g.pool, g.stream);
  captures_.fetch_sub(1, std::memory_order_release);
  // Without keep_graph the graph is instantiated at once, as CUDA graphs are.
  g.phase = g.keep_graph ? Phase::Captured : Phase::Ended;
}

void SynchronousCachingHooks::graphInstantiateImpl(GraphId id) {
  enter(HookId::graphInstantiate);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  graph(id, HookId::graphInstantiate, {Phase::Captured, Phase::Instantiated}).phase =
      Phase::Instantiated;
}

void SynchronousCachingHooks::graphReplayImpl(GraphId id) {
  enter(HookId::graphReplay);
  std::vector<std::function<void()>> work;
  {
    std::lock_guard<std::mutex> lock(graph_mutex_);
    work = graph(id, HookId::graphReplay, {Phase::Instantiated, Phase::Ended}).work;
  }
  // Outside the lock: the work may launch more work or query graphs.
  for (const std::function<void()>& step : work) step();
}

void SynchronousCachingHooks::graphResetImpl(GraphId id) {
  enter(HookId::graphReset);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  releaseGraph(graph(id, HookId::graphReset));
}

MempoolId SynchronousCachingHooks::graphPoolImpl(GraphId id) const {
  enter(HookId::graphPool);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  return graph(id, HookId::graphPool).pool;
}

}  // namespace accel::kit
