#include "support/test_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"

namespace accel::testing {
namespace {

// The allocators' own names for failHook and the observer: they are not hooks.
constexpr std::string_view kAllocate = "allocate";
constexpr std::string_view kAllocatePinned = "allocatePinned";

using Action = MemoryTraceEntry::Action;

}  // namespace

struct TestHooks::State {
  struct Allocation {
    std::size_t size;       // rounded to kAllocationAlignment
    std::size_t requested;  // as asked
    DeviceIndex device;
  };
  struct Fault {
    std::string hook;
    int remaining;  // kAlways, or calls left
  };
  enum class Phase : std::uint8_t { Empty, Capturing, Captured, Instantiated };
  struct Graph {
    bool keep_graph = false;
    Phase phase = Phase::Empty;
    MempoolId pool;
    Stream stream;  // the captured stream, while capturing and after
    std::uint64_t replays = 0;
  };
  struct PerDevice {
    MemoryStats stats;
    std::deque<MemoryTraceEntry> trace;
  };

  explicit State(int device_count) : device_count(device_count), devices(device_count) {}

  Graph& graph(GraphId id, std::string_view hook, std::string_view backend) {
    auto it = graphs.find(id);
    ACCEL_CHECK(it != graphs.end(), InvalidArgument, hook, "(): graph ", id,
                " is not a live graph of '", backend, "'; create it with ",
                hookInfo(HookId::graphCreate).name, "() and do not use it after ",
                hookInfo(HookId::graphDestroy).name, "()");
    return it->second;
  }
  // Throws DeviceError if `stream` (or, with `whole_device`, any stream of its
  // device) is being captured. The mutex is held.
  void requireNotCapturing(Stream stream, std::string_view hook,
                           bool whole_device) const {
    for (const auto& [id, g] : graphs) {
      const bool hit =
          whole_device ? g.stream.device == stream.device : g.stream == stream;
      ACCEL_CHECK(!(g.phase == Phase::Capturing && hit), DeviceError, hook,
                  "(): ", whole_device ? "a stream of " : "", stream,
                  " is being captured into graph ", id,
                  "; this call is not allowed during capture. End the capture first");
    }
  }

  const int device_count;
  std::atomic<int> init_calls{0};
  std::atomic<bool> initialized{false};
  std::atomic<bool> available{true};
  std::atomic<std::size_t> capacity{kDefaultMemoryCapacity};
  std::mutex instrument_mutex;  // guards faults and observer
  std::vector<Fault> faults;
  std::shared_ptr<const HookObserver> observer;
  std::vector<std::unique_ptr<HostAllocator>> device_allocators;
  std::unique_ptr<HostAllocator> pinned_allocator;

  std::mutex mutex;  // guards everything below
  std::vector<PerDevice> devices;
  std::map<std::uintptr_t, Allocation> allocations;  // device memory only
  std::vector<OutOfMemoryObserver> oom_observers;
  MemoryHistoryOptions history{HistoryRecording::Off, 0, false};
  std::map<GraphId, Graph> graphs;
  GraphId next_graph = 1;
  std::uint64_t next_pool = 1;
};

class TestHooks::HostAllocator final : public Allocator {
 public:
  HostAllocator(TestHooks& hooks, DeviceIndex index) : hooks_(hooks), index_(index) {}
  DataPtr allocate(std::size_t bytes) override { return hooks_.allocate(index_, bytes); }
  Device device() const noexcept override {
    return index_ < 0 ? Device(DeviceType::CPU) : Device(hooks_.deviceType(), index_);
  }

 private:
  TestHooks& hooks_;
  DeviceIndex index_;  // -1: pinned host memory
};

TestHooks::TestHooks(DeviceType type, int device_count)
    : SynchronousDeviceHooks(type, kAllGroups, device_count),
      state_(std::make_unique<State>(device_count)) {
  for (int i = 0; i < device_count; ++i) {
    state_->device_allocators.push_back(
        std::make_unique<HostAllocator>(*this, static_cast<DeviceIndex>(i)));
  }
  state_->pinned_allocator = std::make_unique<HostAllocator>(*this, kCurrentDevice);
}

TestHooks::~TestHooks() = default;

// ---- knobs ----

int TestHooks::configuredDeviceCount() const noexcept { return state_->device_count; }
int TestHooks::initCalls() const noexcept { return state_->init_calls.load(); }
bool TestHooks::initialized() const noexcept { return state_->initialized.load(); }
void TestHooks::failNextInits(int count) {
  if (count != 0) failHook(hookInfo(HookId::init).name, count);
}

void TestHooks::failHook(std::string_view hook, int times) {
  ACCEL_CHECK(findHook(hook) || hook == kAllocate || hook == kAllocatePinned,
              InvalidArgument, "TestHooks::failHook(): '", hook,
              "' is not a hook of the test backend; use a public hook name such as '",
              hookInfo(HookId::getCurrentStream).name, "', or '", kAllocate, "' / '",
              kAllocatePinned, "'");
  ACCEL_CHECK(times == kAlways || times > 0, InvalidArgument, "TestHooks::failHook('",
              hook, "'): times must be positive or kAlways, got ", times);
  std::lock_guard<std::mutex> lock(state_->instrument_mutex);
  std::erase_if(state_->faults, [&](const State::Fault& f) { return f.hook == hook; });
  state_->faults.push_back(State::Fault{std::string(hook), times});
  setTracing(true);
}

void TestHooks::clearHookFailures() {
  std::lock_guard<std::mutex> lock(state_->instrument_mutex);
  state_->faults.clear();
  setTracing(state_->observer != nullptr);
}

void TestHooks::setHookObserver(HookObserver observer) {
  std::lock_guard<std::mutex> lock(state_->instrument_mutex);
  state_->observer =
      observer ? std::make_shared<const HookObserver>(std::move(observer)) : nullptr;
  setTracing(!state_->faults.empty() || state_->observer != nullptr);
}

void TestHooks::onHookCall(HookId hook) const { traced(hookInfo(hook).name); }

void TestHooks::traced(std::string_view hook) const {
  std::shared_ptr<const HookObserver> observer;
  bool fail = false;
  {
    std::lock_guard<std::mutex> lock(state_->instrument_mutex);
    observer = state_->observer;
    auto it = std::find_if(state_->faults.begin(), state_->faults.end(),
                           [&](const State::Fault& f) { return f.hook == hook; });
    if (it != state_->faults.end()) {
      fail = true;
      if (it->remaining != kAlways && --it->remaining == 0) state_->faults.erase(it);
    }
  }
  if (observer) (*observer)(hook);
  ACCEL_CHECK(!fail, DeviceError, hook, "(): injected failure on '", name(),
              "' (TestHooks::failHook); call clearHookFailures() to stop it");
}

void TestHooks::setAvailable(bool available) noexcept {
  state_->available.store(available);
}
void TestHooks::setMemoryCapacity(std::size_t bytes) noexcept {
  state_->capacity.store(bytes);
}
std::size_t TestHooks::memoryCapacity() const noexcept { return state_->capacity.load(); }
std::size_t TestHooks::liveDeviceAllocations() const {
  return addresses().count(kit::MemoryKind::Device);
}
std::size_t TestHooks::livePinnedAllocations() const {
  return addresses().count(kit::MemoryKind::Pinned);
}
std::uint64_t TestHooks::graphReplayCount(GraphId graph) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->graph(graph, "graphReplayCount", name()).replays;
}

// ---- low, high ----

bool TestHooks::isAvailableImpl() const {
  enter(HookId::isAvailable);
  return state_->available.load() && state_->device_count > 0;
}

void TestHooks::initImpl() {
  state_->init_calls.fetch_add(1);
  enter(HookId::init);
  markDeviceUsed(current().device());
  state_->initialized.store(true);
}

Allocator& TestHooks::getPinnedMemoryAllocatorImpl() {
  enter(HookId::getPinnedMemoryAllocator);
  return *state_->pinned_allocator;
}

Allocator& TestHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  enter(HookId::getDeviceAllocator);
  return *state_->device_allocators[static_cast<std::size_t>(index)];
}

// ---- allocation ----

DataPtr TestHooks::allocate(DeviceIndex index, std::size_t bytes) {
  const bool pinned = index < 0;
  if (tracing()) [[unlikely]]
    traced(pinned ? kAllocatePinned : kAllocate);
  const Device device = pinned ? Device(DeviceType::CPU) : Device(deviceType(), index);
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, device);
  const std::size_t capacity =
      pinned ? SIZE_MAX - kAllocationAlignment : state_->capacity.load();
  // Rounding a request above the capacity could overflow; it fails anyway.
  const std::size_t size =
      bytes > capacity ? bytes
                       : (bytes + kAllocationAlignment - 1) & ~(kAllocationAlignment - 1);
  std::unique_lock<std::mutex> lock(state_->mutex);
  State::PerDevice* per_device = pinned ? nullptr : &state_->devices[index];
  const auto reserved =
      pinned ? 0 : static_cast<std::size_t>(per_device->stats.reserved_bytes.current);
  void* base = size > capacity || reserved > capacity - size
                   ? nullptr
                   : std::aligned_alloc(kAllocationAlignment, size);
  if (base == nullptr) {
    std::vector<OutOfMemoryObserver> observers;
    const OutOfMemoryEvent oom{index, bytes, capacity,
                               capacity - std::min(reserved, capacity)};
    if (!pinned) {
      ++per_device->stats.num_ooms;
      observers = state_->oom_observers;
    }
    lock.unlock();  // observers may read memoryStats()
    for (const OutOfMemoryObserver& observer : observers) {
      try {
        observer(oom);
      } catch (...) {
        // Observers must not throw; one that does must not hide the OOM.
      }
    }
    throw OutOfMemory(detail::concat(
        "allocate(): out of memory on '", device, "': asked for ", bytes, " bytes (",
        size, " after rounding), ", oom.device_free_bytes, " of ", capacity,
        " bytes free; free memory or raise the test capacity with setMemoryCapacity()"));
  }
  addresses().insert(base, size, device,
                     pinned ? kit::MemoryKind::Pinned : kit::MemoryKind::Device);
  if (!pinned) {
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    state_->allocations[address] = State::Allocation{size, bytes, index};
    MemoryStats& s = per_device->stats;
    for (Stat* stat : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                       &s.requested_bytes, &s.allocations, &s.segments}) {
      const auto n = static_cast<std::int64_t>(
          stat == &s.requested_bytes                      ? bytes
          : stat == &s.allocations || stat == &s.segments ? 1
                                                          : size);
      stat->current += n;
      stat->allocated += n;
      stat->peak = std::max(stat->peak, stat->current);
    }
    ++s.num_device_alloc;
    recordTrace(index, Action::SegmentAlloc, address, size);
    recordTrace(index, Action::Alloc, address, size);
    markDeviceUsed(index);
  }
  struct Release {
    TestHooks* hooks;
    void* base;
  };
  return DataPtr(
      base, new Release{this, base},
      [](void* context) noexcept {
        auto* release = static_cast<Release*>(context);
        release->hooks->release(release->base);
        delete release;
      },
      device);
}

void TestHooks::release(void* base) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  try {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (auto it = state_->allocations.find(address); it != state_->allocations.end()) {
      const State::Allocation a = it->second;
      state_->allocations.erase(it);
      MemoryStats& s = state_->devices[a.device].stats;
      for (Stat* stat : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                         &s.requested_bytes, &s.allocations, &s.segments}) {
        const auto n = static_cast<std::int64_t>(
            stat == &s.requested_bytes                      ? a.requested
            : stat == &s.allocations || stat == &s.segments ? 1
                                                            : a.size);
        stat->current -= n;
        stat->freed += n;
      }
      ++s.num_device_free;
      recordTrace(a.device, Action::FreeRequested, address, a.size);
      recordTrace(a.device, Action::FreeCompleted, address, a.size);
      recordTrace(a.device, Action::SegmentFree, address, a.size);
    }
  } catch (...) {
    // Only the mutex or the trace can throw here; the memory is freed anyway.
  }
  addresses().erase(base);
  std::free(base);
}

void TestHooks::recordTrace(DeviceIndex index, MemoryTraceEntry::Action action,
                            std::uintptr_t address, std::size_t size) {
  const MemoryHistoryOptions& history = state_->history;
  const bool segment_event = action == Action::SegmentAlloc ||
                             action == Action::SegmentFree ||
                             action == Action::FreeRequested;
  if (history.enabled == HistoryRecording::Off ||
      (segment_event && history.enabled != HistoryRecording::All)) {
    return;
  }
  MemoryTraceEntry entry;
  entry.action = action;
  entry.address = address;
  entry.size = size;
  entry.stream = Stream(Device(deviceType(), index), current().stream(index));
  entry.time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  if (history.record_stack)
    entry.frames.push_back("accel::testing::TestHooks (no stacks)");
  std::deque<MemoryTraceEntry>& trace = state_->devices[index].trace;
  trace.push_back(std::move(entry));
  while (trace.size() > history.max_entries) trace.pop_front();
}

// ---- device, streams ----

void TestHooks::deviceSynchronizeImpl(DeviceIndex index) {
  enter(HookId::deviceSynchronize);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->requireNotCapturing(Stream(Device(deviceType(), index), kDefaultStreamId),
                              hookInfo(HookId::deviceSynchronize).name,
                              /*whole_device=*/true);
}

std::string TestHooks::showConfigImpl() const {
  enter(HookId::showConfig);
  return detail::concat("accel::testing::TestHooks for '", name(),
                        "': ", state_->device_count, " in-memory devices, ",
                        memoryCapacity(),
                        " bytes of memory each, synchronous streams and events\n");
}

DeviceProperties TestHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  enter(HookId::getDeviceProperties);
  DeviceProperties props;
  props.name = detail::concat(name(), " in-memory test device");
  props.total_memory_bytes = memoryCapacity();
  props.multiprocessor_count = 1;
  props.warp_size = 1;
  props.max_threads_per_multiprocessor = 1;
  props.is_integrated = true;
  props.uuid = detail::concat("test-", name(), "-", int(index));
  return props;
}

bool TestHooks::queryStreamImpl(Stream stream) const {
  const bool idle = SynchronousDeviceHooks::queryStreamImpl(stream);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->requireNotCapturing(stream, hookInfo(HookId::queryStream).name, false);
  return idle;
}

void TestHooks::synchronizeStreamImpl(Stream stream) const {
  SynchronousDeviceHooks::synchronizeStreamImpl(stream);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->requireNotCapturing(stream, hookInfo(HookId::synchronizeStream).name, false);
}

std::pair<int, int> TestHooks::streamPriorityRangeImpl() const {
  enter(HookId::streamPriorityRange);
  return {kLowestStreamPriority, kGreatestStreamPriority};
}

// ---- memory ----

MemoryStats TestHooks::memoryStatsImpl(DeviceIndex index) const {
  enter(HookId::memoryStats);
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->devices[index].stats;
}

void TestHooks::resetPeakMemoryStatsImpl(DeviceIndex index) {
  enter(HookId::resetPeakMemoryStats);
  std::lock_guard<std::mutex> lock(state_->mutex);
  MemoryStats& s = state_->devices[index].stats;
  for (Stat* stat : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                     &s.requested_bytes, &s.allocations, &s.segments}) {
    stat->peak = stat->current;
  }
}

void TestHooks::emptyCacheImpl() {
  enter(HookId::emptyCache);  // nothing is cached: every free returns memory at once
}

void TestHooks::recordMemoryHistoryImpl(const MemoryHistoryOptions& options) {
  enter(HookId::recordMemoryHistory);
  std::lock_guard<std::mutex> lock(state_->mutex);
  // Enabling starts a fresh trace; disabling keeps what was recorded so that a
  // snapshot taken afterwards still shows it.
  if (options.enabled != HistoryRecording::Off) {
    for (State::PerDevice& device : state_->devices) device.trace.clear();
  }
  state_->history = options;
}

MemorySnapshot TestHooks::memorySnapshotImpl(const MemorySnapshotOptions& options) const {
  enter(HookId::memorySnapshot);
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto selected = [&](int index) {
    return options.all_devices || index == options.device;
  };
  MemorySnapshot snapshot;
  for (const auto& [address, a] : state_->allocations) {
    if (!selected(a.device)) continue;
    MemorySegment segment;
    segment.device = Device(deviceType(), a.device);
    segment.address = address;
    segment.total_size = segment.allocated_size = a.size;
    segment.stream = Stream(segment.device, kDefaultStreamId);
    segment.is_large = a.size >= (std::size_t{1} << 20);
    segment.blocks.push_back(
        MemoryBlock{address, a.size, a.requested, MemoryBlock::State::Allocated});
    snapshot.segments.push_back(std::move(segment));
  }
  if (options.include_trace) {
    snapshot.device_traces.resize(static_cast<std::size_t>(state_->device_count));
    for (int i = 0; i < state_->device_count; ++i) {
      const std::deque<MemoryTraceEntry>& trace = state_->devices[i].trace;
      if (selected(i)) snapshot.device_traces[i].assign(trace.begin(), trace.end());
    }
  }
  return snapshot;
}

void TestHooks::attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer) {
  enter(HookId::attachOutOfMemoryObserver);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->oom_observers.push_back(std::move(observer));
}

// ---- graphs: a state machine; capture records no work ----

GraphId TestHooks::graphCreateImpl(bool keep_graph) {
  enter(HookId::graphCreate);
  std::lock_guard<std::mutex> lock(state_->mutex);
  const GraphId id = state_->next_graph++;
  state_->graphs[id] = State::Graph{keep_graph};
  return id;
}

void TestHooks::graphDestroyImpl(GraphId graph) {
  enter(HookId::graphDestroy);
  std::lock_guard<std::mutex> lock(state_->mutex);
  const State::Graph& g =
      state_->graph(graph, hookInfo(HookId::graphDestroy).name, name());
  ACCEL_CHECK(g.phase != State::Phase::Capturing, DeviceError,
              hookInfo(HookId::graphDestroy).name, "(): graph ", graph,
              " is still capturing ", g.stream, "; call ",
              hookInfo(HookId::graphCaptureEnd).name, "() before destroying it");
  state_->graphs.erase(graph);
}

void TestHooks::graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode) {
  enter(HookId::graphCaptureBegin);
  const DeviceIndex device = current().device();
  const Stream stream(Device(deviceType(), device), current().stream(device));
  std::lock_guard<std::mutex> lock(state_->mutex);
  State::Graph& g =
      state_->graph(graph, hookInfo(HookId::graphCaptureBegin).name, name());
  ACCEL_CHECK(g.phase == State::Phase::Empty, DeviceError,
              hookInfo(HookId::graphCaptureBegin).name, "(): graph ", graph,
              " already holds a capture; call ", hookInfo(HookId::graphReset).name,
              "() before capturing again");
  state_->requireNotCapturing(stream, hookInfo(HookId::graphCaptureBegin).name, false);
  g.phase = State::Phase::Capturing;
  g.stream = stream;
  g.pool = pool.isDefault() ? MempoolId{state_->next_pool++, 0} : pool;
}

void TestHooks::graphCaptureEndImpl(GraphId graph) {
  enter(HookId::graphCaptureEnd);
  const DeviceIndex device = current().device();
  const Stream current_stream(Device(deviceType(), device), current().stream(device));
  std::lock_guard<std::mutex> lock(state_->mutex);
  State::Graph& g = state_->graph(graph, hookInfo(HookId::graphCaptureEnd).name, name());
  ACCEL_CHECK(g.phase == State::Phase::Capturing, DeviceError,
              hookInfo(HookId::graphCaptureEnd).name, "(): graph ", graph,
              " is not capturing; call ", hookInfo(HookId::graphCaptureBegin).name,
              "() first");
  ACCEL_CHECK(current_stream == g.stream, DeviceError,
              hookInfo(HookId::graphCaptureEnd).name, "(): graph ", graph,
              " is capturing ", g.stream, " but the current stream is ", current_stream,
              "; end the capture with the captured stream current");
  // Without keep_graph the graph is instantiated at once, as CUDA graphs are.
  g.phase = g.keep_graph ? State::Phase::Captured : State::Phase::Instantiated;
}

void TestHooks::graphInstantiateImpl(GraphId graph) {
  enter(HookId::graphInstantiate);
  std::lock_guard<std::mutex> lock(state_->mutex);
  State::Graph& g = state_->graph(graph, hookInfo(HookId::graphInstantiate).name, name());
  const bool instantiated = g.phase == State::Phase::Instantiated;
  ACCEL_CHECK(g.phase == State::Phase::Captured || (instantiated && g.keep_graph),
              DeviceError, hookInfo(HookId::graphInstantiate).name, "(): graph ", graph,
              instantiated ? " was created without keep_graph and was instantiated by "
                           : " holds no finished capture; capture it first",
              instantiated ? hookInfo(HookId::graphCaptureEnd).name : "",
              instantiated ? "(); replay it directly" : "");
  g.phase = State::Phase::Instantiated;
}

void TestHooks::graphReplayImpl(GraphId graph) {
  enter(HookId::graphReplay);
  std::lock_guard<std::mutex> lock(state_->mutex);
  State::Graph& g = state_->graph(graph, hookInfo(HookId::graphReplay).name, name());
  ACCEL_CHECK(g.phase == State::Phase::Instantiated, DeviceError,
              hookInfo(HookId::graphReplay).name, "(): graph ", graph,
              " is not instantiated; capture it", g.keep_graph ? " and call " : "",
              g.keep_graph ? hookInfo(HookId::graphInstantiate).name : "",
              g.keep_graph ? "()" : "", " first");
  ++g.replays;
}

void TestHooks::graphResetImpl(GraphId graph) {
  enter(HookId::graphReset);
  std::lock_guard<std::mutex> lock(state_->mutex);
  State::Graph& g = state_->graph(graph, hookInfo(HookId::graphReset).name, name());
  ACCEL_CHECK(g.phase != State::Phase::Capturing, DeviceError,
              hookInfo(HookId::graphReset).name, "(): graph ", graph,
              " is capturing; call ", hookInfo(HookId::graphCaptureEnd).name, "() first");
  g = State::Graph{g.keep_graph};
}

MempoolId TestHooks::graphPoolImpl(GraphId graph) const {
  enter(HookId::graphPool);
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->graph(graph, hookInfo(HookId::graphPool).name, name()).pool;
}

// ---- registration ----

TestHooks& registerTestBackend(std::string_view type_name, int device_count) {
  static std::mutex* mutex = new std::mutex();  // never destroyed, like the hooks
  const DeviceType type = registerDeviceType(type_name);
  std::lock_guard<std::mutex> lock(*mutex);
  if (isHooksRegistered(type)) {
    auto* existing = dynamic_cast<TestHooks*>(&getHooks(type));
    ACCEL_CHECK(existing != nullptr, InvalidArgument, "registerTestBackend('", type_name,
                "'): the type already has a backend that is not a TestHooks (from ",
                hooksOrigin(type), "); use another type name for the test backend");
    ACCEL_CHECK(existing->configuredDeviceCount() == device_count, InvalidArgument,
                "registerTestBackend('", type_name, "', ", device_count,
                "): it is already registered with ", existing->configuredDeviceCount(),
                " devices; use the same count or another type name");
    return *existing;
  }
  return static_cast<TestHooks&>(
      registerHooks(std::make_unique<TestHooks>(type, device_count),
                    "accel::testing::registerTestBackend"));
}

}  // namespace accel::testing
