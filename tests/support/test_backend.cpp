#include "support/test_backend.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"

namespace accel::testing {

// Aligned host memory for the device cache (whose limit is the capacity) or
// the pinned cache, recorded in the address map.
class TestHooks::HostSegments final : public memory::SegmentSource {
 public:
  HostSegments(TestHooks& hooks, bool pinned) : hooks_(hooks), pinned_(pinned) {}
  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    // Sizes are whole quanta (2 MiB steps, or powers of two for pinned memory).
    std::unique_ptr<void, void (*)(void*)> base(
        std::aligned_alloc(kAllocationAlignment, bytes), &std::free);
    if (base == nullptr) return nullptr;
    hooks_.addresses().insert(
        base.get(), bytes, pinned_ ? Device() : Device(hooks_.deviceType(), index),
        pinned_ ? kit::MemoryKind::Pinned : kit::MemoryKind::Device);
    noteAllocated(index, bytes);
    return base.release();
  }
  void freeSegment(DeviceIndex index, void* base, std::size_t bytes) noexcept override {
    hooks_.addresses().erase(base);
    std::free(base);
    if (!pinned_) held_[static_cast<std::size_t>(index)] -= bytes;
  }
  // The capacity setMemoryCapacity gave, less the segments this source holds.
  DeviceMemoryInfo memoryInfo(DeviceIndex index) const noexcept override {
    if (pinned_ || index < 0 || static_cast<std::size_t>(index) >= held_.size())
      return {};
    const std::size_t total = hooks_.memoryCapacity();
    const std::size_t held = held_[static_cast<std::size_t>(index)].load();
    return {total, held < total ? total - held : 0};
  }
  void noteAllocated(DeviceIndex index, std::size_t bytes) noexcept {
    if (!pinned_) held_[static_cast<std::size_t>(index)] += bytes;
  }

 private:
  TestHooks& hooks_;
  const bool pinned_;
  std::array<std::atomic<std::size_t>, kMaxDevicesPerType> held_{};
};

// The allocator a hook hands out: traces its name, then asks the core cache
// for a block on the calling thread's current stream of its device.
class TestHooks::TracedAllocator final : public Allocator {
 public:
  TracedAllocator(TestHooks& hooks, DeviceIndex index) : hooks_(hooks), index_(index) {}
  DataPtr allocate(std::size_t bytes) override {
    // The pinned path wraps the core's pinned cache, which does not know it
    // is this backend's: the wrapper refuses in a fork child itself.
    if (index_ < 0) refuseIfPoisonedByFork(hooks_.deviceType(), "pinned allocate()");
    if (hooks_.tracing()) [[unlikely]]
      hooks_.traced(index_ < 0 ? kAllocatePinned : kAllocate);
    if (index_ < 0) return hooks_.pinned_.allocate(bytes);
    hooks_.markDeviceUsed(index_);
    return hooks_.cache_.allocate(index_, bytes,
                                  Stream(device(), hooks_.current().stream(index_)));
  }
  Device device() const noexcept override {
    return index_ < 0 ? hooks_.pinned_.device() : Device(hooks_.deviceType(), index_);
  }

 private:
  TestHooks& hooks_;
  DeviceIndex index_;  // -1: pinned host memory
};

TestHooks::TestHooks(DeviceType type, int device_count)
    : CachingAllocatorHooks(
          type,
          Capabilities{HookGroup::Device, HookGroup::Memory, HookGroup::MemoryHistory,
                       HookGroup::Graphs, HookGroup::Copies, HookGroup::Fill},
          device_count),
      device_count_(device_count),
      device_segments_(std::make_unique<HostSegments>(*this, false)),
      pinned_segments_(std::make_unique<HostSegments>(*this, true)),
      cache_(type, std::max(device_count, 1), *device_segments_),  // 0 devices: unused
      pinned_(*pinned_segments_) {
  for (int i = -1; i < device_count; ++i)
    allocators_.push_back(std::make_unique<TracedAllocator>(*this, DeviceIndex(i)));
  setMemoryCapacity(kDefaultMemoryCapacity);
}

TestHooks::~TestHooks() = default;

// ---- knobs ----

void TestHooks::setMemoryCapacity(std::size_t bytes) {
  capacity_.store(bytes);
  for (int i = 0; i < device_count_; ++i) cache_.setMemoryLimit(DeviceIndex(i), bytes);
}

void TestHooks::failHook(std::string_view hook, int times) {
  const std::optional<HookId> id = findHook(hook);
  const bool traced_memory = !id && (hook == kAllocate || hook == kAllocatePinned);
  ACCEL_CHECK((traced_memory || (id && hookInfo(*id).group != HookGroup::Memory &&
                                 hookInfo(*id).group != HookGroup::MemoryHistory)) &&
                  (times == kAlways || times > 0),
              InvalidArgument, "TestHooks::failHook('", hook, "', ", times,
              "): name a hook outside the memory groups (the core's, not traced) or '",
              kAllocate, "' / '", kAllocatePinned, "', and a count > 0 or kAlways");
  std::lock_guard<std::mutex> lock(instrument_mutex_);
  faults_.insert_or_assign(std::string(hook), times);
  setTracing(true);
}

void TestHooks::clearHookFailures() {
  std::lock_guard<std::mutex> lock(instrument_mutex_);
  faults_.clear();
  setTracing(observer_ != nullptr);
}

void TestHooks::setHookObserver(HookObserver observer) {
  std::lock_guard<std::mutex> lock(instrument_mutex_);
  observer_ =
      observer ? std::make_shared<const HookObserver>(std::move(observer)) : nullptr;
  setTracing(!faults_.empty() || observer_ != nullptr);
}

void TestHooks::onHookCall(HookId hook) const { traced(hookInfo(hook).name); }

void TestHooks::traced(std::string_view hook) const {
  std::unique_lock<std::mutex> lock(instrument_mutex_);
  const std::shared_ptr<const HookObserver> observer = observer_;
  const auto it = faults_.find(hook);
  const bool fail = it != faults_.end();
  if (fail && it->second != kAlways && --it->second == 0) faults_.erase(it);
  lock.unlock();  // the observer runs unlocked
  if (observer) (*observer)(hook);
  ACCEL_CHECK(!fail, DeviceError, hook, "(): injected failure on '", name(),
              "' (TestHooks::failHook); call clearHookFailures() to stop it");
}

// ---- low, high, device ----

bool TestHooks::isAvailableImpl() const {
  return SynchronousDeviceHooks::isAvailableImpl() && available_.load();
}

void TestHooks::initImpl() {
  init_calls_.fetch_add(1);
  enter(HookId::init);
  markDeviceUsed(current().device());
}

Allocator& TestHooks::getPinnedMemoryAllocatorImpl() {
  enter(HookId::getPinnedMemoryAllocator);
  return *allocators_.front();
}

Allocator& TestHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  enter(HookId::getDeviceAllocator);
  return *allocators_[static_cast<std::size_t>(index) + 1];
}

std::string TestHooks::showConfigImpl() const {
  enter(HookId::showConfig);
  return detail::concat("accel::testing::TestHooks '", name(), "': ", device_count_,
                        " in-memory devices of ", memoryCapacity(), " bytes\n");
}

DeviceProperties TestHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  enter(HookId::getDeviceProperties);
  DeviceProperties props;
  props.name = detail::concat(name(), " in-memory test device");
  props.total_memory_bytes = memoryCapacity();
  props.uuid = detail::concat("test-", name(), "-", int(index));
  return props;
}

// ---- graphs: a state machine; capture records no work ----

TestHooks::Graph& TestHooks::graph(GraphId id, HookId hook,
                                   std::initializer_list<Phase> phases) const {
  auto it = graphs_.find(id);
  ACCEL_CHECK(it != graphs_.end(), InvalidArgument, hookInfo(hook).name, "(): graph ", id,
              " is not a live graph of '", name(), "'; create it with ",
              hookInfo(HookId::graphCreate).name, "()");
  constexpr std::string_view kPhases[] = {
      "holds no capture", "is capturing", "holds a capture that is not instantiated",
      "is instantiated", "was instantiated as its capture ended (no keep_graph)"};
  const Phase phase = it->second.phase;
  ACCEL_CHECK(phases.size() == 0 || std::ranges::find(phases, phase) != phases.end(),
              DeviceError, hookInfo(hook).name, "(): graph ", id, " ",
              kPhases[static_cast<int>(phase)], "; a graph is captured, instantiated ",
              "(keep_graph only), replayed; ", hookInfo(HookId::graphReset).name,
              "() starts over");
  return it->second;
}

GraphId TestHooks::graphCreateImpl(bool keep_graph) {
  enter(HookId::graphCreate);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  graphs_[next_graph_] = Graph{keep_graph};
  return next_graph_++;
}

void TestHooks::graphDestroyImpl(GraphId id) {
  onGraph(id, HookId::graphDestroy,
          {Phase::Empty, Phase::Captured, Phase::Instantiated, Phase::Ended},
          [&](Graph&) { graphs_.erase(id); });
}

void TestHooks::graphCaptureBeginImpl(GraphId id, MempoolId pool, CaptureMode) {
  onGraph(id, HookId::graphCaptureBegin, {Phase::Empty}, [&](Graph& g) {
    g.phase = Phase::Capturing;
    g.pool = pool.isDefault() ? cache_.createPool() : pool;
  });
}

void TestHooks::graphCaptureEndImpl(GraphId id) {
  // Without keep_graph the graph is instantiated at once, as CUDA graphs are.
  onGraph(id, HookId::graphCaptureEnd, {Phase::Capturing},
          [](Graph& g) { g.phase = g.keep_graph ? Phase::Captured : Phase::Ended; });
}

void TestHooks::graphInstantiateImpl(GraphId id) {
  onGraph(id, HookId::graphInstantiate, {Phase::Captured, Phase::Instantiated},
          [](Graph& g) { g.phase = Phase::Instantiated; });
}

void TestHooks::graphReplayImpl(GraphId id) {
  onGraph(id, HookId::graphReplay, {Phase::Instantiated, Phase::Ended}, [](Graph&) {});
}

void TestHooks::graphResetImpl(GraphId id) {
  onGraph(id, HookId::graphReset,
          {Phase::Empty, Phase::Captured, Phase::Instantiated, Phase::Ended},
          [](Graph& g) { g = Graph{g.keep_graph}; });
}

MempoolId TestHooks::graphPoolImpl(GraphId id) const {
  return onGraph(id, HookId::graphPool, {}, [](Graph& g) { return g.pool; });
}

// ---- registration ----

TestHooks& registerTestBackend(std::string_view type_name, int device_count) {
  static std::mutex* mutex = new std::mutex();  // never destroyed, like the hooks
  const DeviceType type = registerDeviceType(type_name);
  std::lock_guard<std::mutex> lock(*mutex);
  if (isHooksRegistered(type)) {
    auto* existing = dynamic_cast<TestHooks*>(&getHooks(type));
    ACCEL_CHECK(
        existing && existing->device_count_ == device_count, InvalidArgument,
        "registerTestBackend('", type_name, "', ", device_count, "): the type has ",
        existing
            ? detail::concat("a TestHooks with ", existing->device_count_, " devices")
            : detail::concat("a backend that is not a TestHooks (from ",
                             hooksOrigin(type), ")"),
        "; use another type name");
    return *existing;
  }
  return static_cast<TestHooks&>(
      registerHooks(std::make_unique<TestHooks>(type, device_count),
                    "accel::testing::registerTestBackend"));
}

}  // namespace accel::testing
