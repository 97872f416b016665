#include "support/test_backend.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "accel/allocator.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"

namespace accel::testing {
namespace {

// Per-thread current device of up to kThreadSlots live TestHooks objects. An
// entry counts only if its owner is the object reading it, so a slot reused
// by a later object starts again at device 0 in every thread. A fixed array
// of trivially constructible entries keeps getCurrentDevice a plain TLS read.
constexpr int kThreadSlots = 256;
struct CurrentDeviceEntry {
  std::uint64_t owner = 0;
  DeviceIndex index = 0;
};
thread_local CurrentDeviceEntry t_current_device[kThreadSlots];

// Per-thread current stream, keyed by (object uid, device index).
thread_local std::unordered_map<std::uint64_t, StreamId> t_current_stream;

std::uint64_t streamKey(std::uint64_t uid, DeviceIndex index) noexcept {
  return (uid << 8) | static_cast<std::uint8_t>(index);
}

struct ThreadSlots {
  std::mutex mutex;
  std::bitset<kThreadSlots> used;
  std::uint64_t next_uid = 1;
};

ThreadSlots& threadSlots() {
  static ThreadSlots* slots = new ThreadSlots();  // never destroyed, like the hooks
  return *slots;
}

int checkedDeviceCount(DeviceType type, int count) {
  ACCEL_CHECK(count >= 0 && count <= kMaxDevicesPerType, InvalidArgument,
              "TestHooks for '", deviceTypeName(type), "': device count ", count,
              " is outside [0, ", kMaxDevicesPerType, "]");
  return count;
}

// The public names failHook accepts.
constexpr std::array<std::string_view, 48> kHookNames = {"isBuilt",
                                                         "isAvailable",
                                                         "deviceCount",
                                                         "getCurrentDevice",
                                                         "setCurrentDevice",
                                                         "exchangeDevice",
                                                         "init",
                                                         "hasPrimaryContext",
                                                         "getDefaultGenerator",
                                                         "getNewGenerator",
                                                         "getDeviceFromPtr",
                                                         "getPinnedMemoryAllocator",
                                                         "isPinnedPtr",
                                                         "getDeviceAllocator",
                                                         "allocate",
                                                         "allocatePinned",
                                                         "deviceSynchronize",
                                                         "showConfig",
                                                         "getDeviceProperties",
                                                         "getCurrentStream",
                                                         "getDefaultStream",
                                                         "getNewStream",
                                                         "setCurrentStream",
                                                         "exchangeStream",
                                                         "queryStream",
                                                         "synchronizeStream",
                                                         "streamPriorityRange",
                                                         "createEvent",
                                                         "recordEvent",
                                                         "blockStream",
                                                         "queryEvent",
                                                         "synchronizeEvent",
                                                         "elapsedTime",
                                                         "memoryStats",
                                                         "resetPeakMemoryStats",
                                                         "emptyCache",
                                                         "recordMemoryHistory",
                                                         "memorySnapshot",
                                                         "attachOutOfMemoryObserver",
                                                         "graphCreate",
                                                         "graphDestroy",
                                                         "graphCaptureBegin",
                                                         "graphCaptureEnd",
                                                         "graphInstantiate",
                                                         "graphReplay",
                                                         "graphReset",
                                                         "graphPool",
                                                         "destroyEvent"};

std::size_t roundUp(std::size_t bytes) noexcept {
  const std::size_t a = TestHooks::kAllocationAlignment;
  return (bytes + a - 1) / a * a;
}

void increase(Stat& stat, std::int64_t amount) noexcept {
  stat.current += amount;
  stat.allocated += amount;
  stat.peak = std::max(stat.peak, stat.current);
}

void decrease(Stat& stat, std::int64_t amount) noexcept {
  stat.current -= amount;
  stat.freed += amount;
}

std::string hexAddress(const void* ptr) {
  std::ostringstream out;
  out << ptr;
  return out.str();
}

// The allocation containing `address` in `allocations`, or end().
template <typename Map>
auto findContaining(Map& allocations, std::uintptr_t address) {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin()) return allocations.end();
  --it;
  if (address < it->first + it->second.size) return it;
  return allocations.end();
}

std::int64_t nowNs() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TestHooks::ThreadSlot::ThreadSlot() {
  ThreadSlots& s = threadSlots();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (int i = 0; i < kThreadSlots; ++i) {
    if (!s.used[i]) {
      s.used[i] = true;
      uid = s.next_uid++;
      index = i;
      return;
    }
  }
  throw InvalidArgument(
      detail::concat("TestHooks: more than ", kThreadSlots,
                     " TestHooks objects are alive at once; destroy the "
                     "unregistered ones a test no longer needs"));
}

TestHooks::ThreadSlot::~ThreadSlot() {
  ThreadSlots& s = threadSlots();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.used[index] = false;
}

// What a DataPtr's deleter receives: enough to untrack and free one block.
struct TestHooks::AllocationContext {
  TestHooks* hooks;
  void* base;
  bool pinned;
};

class TestHooks::DeviceAllocator final : public Allocator {
 public:
  DeviceAllocator(TestHooks& hooks, DeviceIndex index) : hooks_(hooks), index_(index) {}
  DataPtr allocate(std::size_t bytes) override {
    return hooks_.allocateDevice(index_, bytes);
  }
  Device device() const noexcept override { return {hooks_.deviceType(), index_}; }

 private:
  TestHooks& hooks_;
  DeviceIndex index_;
};

class TestHooks::PinnedAllocator final : public Allocator {
 public:
  explicit PinnedAllocator(TestHooks& hooks) : hooks_(hooks) {}
  DataPtr allocate(std::size_t bytes) override { return hooks_.allocatePinned(bytes); }
  Device device() const noexcept override { return Device(DeviceType::CPU); }

 private:
  TestHooks& hooks_;
};

TestHooks::TestHooks(DeviceType type, int device_count)
    : AcceleratorHooks(type, kAllGroups),
      device_count_(checkedDeviceCount(type, device_count)),
      primary_context_(new std::atomic<bool>[static_cast<std::size_t>(device_count)]),
      default_generators_(type, device_count, [this] { return getCurrentDevice(); }),
      devices_(static_cast<std::size_t>(device_count)) {
  for (int i = 0; i < device_count; ++i) primary_context_[i].store(false);
  for (int i = 0; i < device_count; ++i) {
    device_allocators_.push_back(
        std::make_unique<DeviceAllocator>(*this, static_cast<DeviceIndex>(i)));
  }
  pinned_allocator_ = std::make_unique<PinnedAllocator>(*this);
}

TestHooks::~TestHooks() = default;

// ---- knobs ----

int TestHooks::initCalls() const noexcept { return init_calls_.load(); }

bool TestHooks::initialized() const noexcept { return initialized_.load(); }

void TestHooks::failNextInits(int count) {
  if (count == 0) return;
  failHook("init", count);
}

void TestHooks::failHook(std::string_view hook, int times) {
  ACCEL_CHECK(std::find(kHookNames.begin(), kHookNames.end(), hook) != kHookNames.end(),
              InvalidArgument, "TestHooks::failHook(): '", hook,
              "' is not a hook of the test backend; use a public hook name such as "
              "'getCurrentStream', or 'allocate' / 'allocatePinned'");
  ACCEL_CHECK(times == kAlways || times > 0, InvalidArgument, "TestHooks::failHook('",
              hook, "'): times must be positive or kAlways, got ", times);
  std::lock_guard<std::mutex> lock(instrument_mutex_);
  auto it = std::find_if(faults_.begin(), faults_.end(),
                         [&](const Fault& f) { return f.hook == hook; });
  if (it != faults_.end()) {
    it->remaining = times;
  } else {
    faults_.push_back(Fault{std::string(hook), times});
  }
  updateInstrumentedLocked();
}

void TestHooks::clearHookFailures() {
  std::lock_guard<std::mutex> lock(instrument_mutex_);
  faults_.clear();
  updateInstrumentedLocked();
}

void TestHooks::setHookObserver(HookObserver observer) {
  std::lock_guard<std::mutex> lock(instrument_mutex_);
  if (observer) {
    observer_ = std::make_shared<const HookObserver>(std::move(observer));
  } else {
    observer_.reset();
  }
  updateInstrumentedLocked();
}

void TestHooks::updateInstrumentedLocked() const {
  instrumented_.store(!faults_.empty() || observer_ != nullptr,
                      std::memory_order_relaxed);
}

void TestHooks::enterSlow(std::string_view hook) const {
  std::shared_ptr<const HookObserver> observer;
  bool fail = false;
  {
    std::lock_guard<std::mutex> lock(instrument_mutex_);
    observer = observer_;
    auto it = std::find_if(faults_.begin(), faults_.end(),
                           [&](const Fault& f) { return f.hook == hook; });
    if (it != faults_.end()) {
      fail = true;
      if (it->remaining != kAlways && --it->remaining == 0) {
        faults_.erase(it);
        updateInstrumentedLocked();
      }
    }
  }
  if (observer) (*observer)(hook);
  if (fail) {
    throw DeviceError(detail::concat(hook, "(): injected failure on '", name(),
                                     "' (TestHooks::failHook); call clearHookFailures() "
                                     "to stop it"));
  }
}

void TestHooks::setAvailable(bool available) noexcept { available_.store(available); }

void TestHooks::setMemoryCapacity(std::size_t bytes_per_device) noexcept {
  capacity_.store(bytes_per_device);
}

std::size_t TestHooks::memoryCapacity() const noexcept { return capacity_.load(); }

std::size_t TestHooks::liveDeviceAllocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return device_allocations_.size();
}

std::size_t TestHooks::livePinnedAllocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pinned_allocations_.size();
}

std::uint64_t TestHooks::graphReplayCount(GraphId graph) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return graphLocked(graph, "graphReplayCount").replays;
}

void TestHooks::markPrimaryContext(DeviceIndex index) noexcept {
  primary_context_[index].store(true, std::memory_order_release);
}

// ---- low ----

bool TestHooks::isBuiltImpl() const {
  enter("isBuilt");
  return true;
}

bool TestHooks::isAvailableImpl() const {
  enter("isAvailable");
  return available_.load(std::memory_order_relaxed) && device_count_ > 0;
}

int TestHooks::deviceCountImpl() const {
  enter("deviceCount");
  return device_count_;
}

DeviceIndex TestHooks::getCurrentDeviceImpl() const {
  enter("getCurrentDevice");
  const CurrentDeviceEntry& entry = t_current_device[slot_.index];
  return entry.owner == slot_.uid ? entry.index : DeviceIndex{0};
}

void TestHooks::setCurrentDeviceImpl(DeviceIndex index) {
  enter("setCurrentDevice");
  t_current_device[slot_.index] = CurrentDeviceEntry{slot_.uid, index};
}

DeviceIndex TestHooks::exchangeDeviceImpl(DeviceIndex index) {
  enter("exchangeDevice");
  CurrentDeviceEntry& entry = t_current_device[slot_.index];
  DeviceIndex previous = entry.owner == slot_.uid ? entry.index : DeviceIndex{0};
  entry = CurrentDeviceEntry{slot_.uid, index};
  return previous;
}

// ---- high ----

void TestHooks::initImpl() {
  init_calls_.fetch_add(1);
  enter("init");
  if (device_count_ > 0) markPrimaryContext(getCurrentDevice());
  initialized_.store(true);
}

bool TestHooks::hasPrimaryContextImpl(DeviceIndex index) const {
  enter("hasPrimaryContext");
  return primary_context_[index].load(std::memory_order_acquire);
}

Generator TestHooks::getDefaultGeneratorImpl(DeviceIndex index) {
  enter("getDefaultGenerator");
  return default_generators_.get(index);
}

Generator TestHooks::getNewGeneratorImpl(DeviceIndex index) {
  enter("getNewGenerator");
  return makePhiloxGenerator(Device(deviceType(), index));
}

Device TestHooks::getDeviceFromPtrImpl(const void* ptr) const {
  enter("getDeviceFromPtr");
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = findContaining(device_allocations_, address);
  if (it != device_allocations_.end()) return Device(deviceType(), it->second.device);
  ACCEL_CHECK(findContaining(pinned_allocations_, address) == pinned_allocations_.end(),
              InvalidArgument, "getDeviceFromPtr(): ", hexAddress(ptr),
              " is pinned host "
              "memory of '",
              name(), "', not device memory; it lives on the CPU");
  throw InvalidArgument(detail::concat(
      "getDeviceFromPtr(): ", hexAddress(ptr), " is not memory allocated by '", name(),
      "' (", device_allocations_.size(),
      " live device allocations); pass a pointer obtained from "
      "getDeviceAllocator(i).allocate() that has not been freed"));
}

Allocator& TestHooks::getPinnedMemoryAllocatorImpl() {
  enter("getPinnedMemoryAllocator");
  return *pinned_allocator_;
}

bool TestHooks::isPinnedPtrImpl(const void* ptr) const {
  enter("isPinnedPtr");
  std::lock_guard<std::mutex> lock(mutex_);
  return findContaining(pinned_allocations_, reinterpret_cast<std::uintptr_t>(ptr)) !=
         pinned_allocations_.end();
}

Allocator& TestHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  enter("getDeviceAllocator");
  return *device_allocators_[index];
}

// ---- allocation ----

void TestHooks::recordTraceLocked(DeviceIndex index, MemoryTraceEntry::Action action,
                                  std::uintptr_t address, std::size_t size,
                                  bool segment_event) {
  if (history_.enabled == HistoryRecording::Off) return;
  if (segment_event && history_.enabled != HistoryRecording::All) return;
  MemoryTraceEntry entry;
  entry.action = action;
  entry.address = address;
  entry.size = size;
  entry.stream = currentStreamOf(index);
  entry.time_ns = nowNs();
  if (history_.record_stack)
    entry.frames.push_back("accel::testing::TestHooks (no stacks)");
  std::deque<MemoryTraceEntry>& trace = devices_[index].trace;
  trace.push_back(std::move(entry));
  while (trace.size() > history_.max_entries) trace.pop_front();
}

DataPtr TestHooks::allocateDevice(DeviceIndex index, std::size_t bytes) {
  enter("allocate");
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(deviceType(), index));
  const std::size_t capacity = capacity_.load();
  // Rounding a request above the capacity could overflow; it fails anyway.
  const std::size_t size = bytes > capacity ? bytes : roundUp(bytes);
  std::vector<OutOfMemoryObserver> observers;
  OutOfMemoryEvent oom;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceState& device = devices_[index];
    const auto reserved = static_cast<std::size_t>(device.stats.reserved_bytes.current);
    if (size > capacity || reserved > capacity - size) {
      ++device.stats.num_ooms;
      recordTraceLocked(index, MemoryTraceEntry::Action::Oom, 0, size, false);
      observers = oom_observers_;
      oom = OutOfMemoryEvent{index, bytes, capacity,
                             capacity - std::min(reserved, capacity)};
    } else {
      void* base = std::aligned_alloc(kAllocationAlignment, size);
      ACCEL_CHECK(base != nullptr, OutOfMemory, "allocate(): the host could not provide ",
                  size, " bytes for '", name(), "' device ", int(index));
      const auto address = reinterpret_cast<std::uintptr_t>(base);
      device_allocations_[address] = Allocation{size, bytes, index};
      MemoryStats& stats = device.stats;
      const auto n = static_cast<std::int64_t>(size);
      increase(stats.allocated_bytes, n);
      increase(stats.reserved_bytes, n);
      increase(stats.active_bytes, n);
      increase(stats.requested_bytes, static_cast<std::int64_t>(bytes));
      increase(stats.allocations, 1);
      increase(stats.segments, 1);
      ++stats.num_device_alloc;
      recordTraceLocked(index, MemoryTraceEntry::Action::SegmentAlloc, address, size,
                        true);
      recordTraceLocked(index, MemoryTraceEntry::Action::Alloc, address, size, false);
      markPrimaryContext(index);
      auto* context = new AllocationContext{this, base, false};
      return DataPtr(
          base, context,
          [](void* ctx) noexcept {
            auto* c = static_cast<AllocationContext*>(ctx);
            c->hooks->release(c);
          },
          Device(deviceType(), index));
    }
  }
  // Observers run without the lock so that they may read memoryStats().
  for (const OutOfMemoryObserver& observer : observers) {
    try {
      observer(oom);
    } catch (...) {
      // Observers must not throw; one that does must not hide the OOM.
    }
  }
  throw OutOfMemory(detail::concat(
      "allocate(): out of memory on '", name(), ":", int(index), "': asked for ", bytes,
      " bytes (", size, " after rounding), ", oom.device_free_bytes, " of ", capacity,
      " bytes free; free memory or raise the test capacity with setMemoryCapacity()"));
}

DataPtr TestHooks::allocatePinned(std::size_t bytes) {
  enter("allocatePinned");
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CPU));
  ACCEL_CHECK(bytes <= SIZE_MAX - kAllocationAlignment, OutOfMemory,
              "allocate(): ", bytes, " bytes of pinned memory cannot be provided by '",
              name(), "'");
  const std::size_t size = roundUp(bytes);
  void* base = std::aligned_alloc(kAllocationAlignment, size);
  ACCEL_CHECK(base != nullptr, OutOfMemory, "allocate(): the host could not provide ",
              size, " bytes of pinned memory for '", name(), "'");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pinned_allocations_[reinterpret_cast<std::uintptr_t>(base)] =
        Allocation{size, bytes, kCurrentDevice};
  }
  auto* context = new AllocationContext{this, base, true};
  return DataPtr(
      base, context,
      [](void* ctx) noexcept {
        auto* c = static_cast<AllocationContext*>(ctx);
        c->hooks->release(c);
      },
      Device(DeviceType::CPU));
}

void TestHooks::release(AllocationContext* context) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(context->base);
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (context->pinned) {
      pinned_allocations_.erase(address);
    } else if (auto it = device_allocations_.find(address);
               it != device_allocations_.end()) {
      const Allocation a = it->second;
      device_allocations_.erase(it);
      MemoryStats& stats = devices_[a.device].stats;
      const auto n = static_cast<std::int64_t>(a.size);
      decrease(stats.allocated_bytes, n);
      decrease(stats.reserved_bytes, n);
      decrease(stats.active_bytes, n);
      decrease(stats.requested_bytes, static_cast<std::int64_t>(a.requested));
      decrease(stats.allocations, 1);
      decrease(stats.segments, 1);
      ++stats.num_device_free;
      recordTraceLocked(a.device, MemoryTraceEntry::Action::FreeRequested, address,
                        a.size, true);
      recordTraceLocked(a.device, MemoryTraceEntry::Action::FreeCompleted, address,
                        a.size, false);
      recordTraceLocked(a.device, MemoryTraceEntry::Action::SegmentFree, address, a.size,
                        true);
    }
  } catch (...) {
    // Only the mutex or the trace can throw here; the memory is freed anyway.
  }
  std::free(context->base);
  delete context;
}

// ---- device ----

void TestHooks::deviceSynchronizeImpl(DeviceIndex index) {
  enter("deviceSynchronize");
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, graph] : graphs_) {
    ACCEL_CHECK(
        !(graph.state == GraphState::Capturing && graph.stream.device.index() == index),
        DeviceError, "deviceSynchronize(): '", name(), ":", int(index),
        "' has a stream being captured into graph ", id,
        "; synchronising would invalidate the capture. End the capture first");
  }
}

std::string TestHooks::showConfigImpl() const {
  enter("showConfig");
  return detail::concat("accel::testing::TestHooks for '", name(), "': ", device_count_,
                        " in-memory devices, ", capacity_.load(),
                        " bytes of memory each, synchronous streams and events\n");
}

DeviceProperties TestHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  enter("getDeviceProperties");
  DeviceProperties props;
  props.name = detail::concat(name(), " in-memory test device");
  props.total_memory_bytes = capacity_.load();
  props.multiprocessor_count = 1;
  props.warp_size = 1;
  props.max_threads_per_multiprocessor = 1;
  props.is_integrated = true;
  props.uuid = detail::concat("test-", name(), "-", int(index));
  return props;
}

// ---- streams ----

Stream TestHooks::currentStreamOf(DeviceIndex index) const {
  auto it = t_current_stream.find(streamKey(slot_.uid, index));
  return Stream(Device(deviceType(), index),
                it == t_current_stream.end() ? kDefaultStreamId : it->second);
}

void TestHooks::requireKnownStreamLocked(Stream stream, std::string_view hook) const {
  if (stream.id == kDefaultStreamId) return;
  const DeviceState& device = devices_[stream.device.index()];
  ACCEL_CHECK(device.streams.count(stream.id) != 0, InvalidArgument, hook, "(): ", stream,
              " was not created by '", name(),
              "'; use getNewStream() or getDefaultStream()");
}

void TestHooks::requireNotCapturingLocked(Stream stream, std::string_view hook) const {
  for (const auto& [id, graph] : graphs_) {
    ACCEL_CHECK(!(graph.state == GraphState::Capturing && graph.stream == stream),
                DeviceError, hook, "(): ", stream, " is being captured into graph ", id,
                "; this call is not allowed during capture. End the capture first");
  }
}

Stream TestHooks::getCurrentStreamImpl(DeviceIndex index) const {
  enter("getCurrentStream");
  return currentStreamOf(index);
}

Stream TestHooks::getDefaultStreamImpl(DeviceIndex index) const {
  enter("getDefaultStream");
  return Stream(Device(deviceType(), index), kDefaultStreamId);
}

Stream TestHooks::getNewStreamImpl(DeviceIndex index, int priority) {
  enter("getNewStream");
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceState& device = devices_[index];
  StreamId id = device.next_stream_id++;
  device.streams.insert(id);
  markPrimaryContext(index);
  return Stream(Device(deviceType(), index), id);
}

void TestHooks::setCurrentStreamImpl(Stream stream) {
  enter("setCurrentStream");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requireKnownStreamLocked(stream, "setCurrentStream");
  }
  t_current_stream[streamKey(slot_.uid, stream.device.index())] = stream.id;
}

Stream TestHooks::exchangeStreamImpl(Stream stream) {
  enter("exchangeStream");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requireKnownStreamLocked(stream, "exchangeStream");
  }
  StreamId& current = t_current_stream[streamKey(slot_.uid, stream.device.index())];
  Stream previous(stream.device, current);
  current = stream.id;
  return previous;
}

bool TestHooks::queryStreamImpl(Stream stream) const {
  enter("queryStream");
  std::lock_guard<std::mutex> lock(mutex_);
  requireKnownStreamLocked(stream, "queryStream");
  requireNotCapturingLocked(stream, "queryStream");
  return true;
}

void TestHooks::synchronizeStreamImpl(Stream stream) const {
  enter("synchronizeStream");
  std::lock_guard<std::mutex> lock(mutex_);
  requireKnownStreamLocked(stream, "synchronizeStream");
  requireNotCapturingLocked(stream, "synchronizeStream");
}

std::pair<int, int> TestHooks::streamPriorityRangeImpl() const {
  enter("streamPriorityRange");
  return {kLowestStreamPriority, kGreatestStreamPriority};
}

// ---- events ----

const TestHooks::EventRecord& TestHooks::eventLocked(EventId event,
                                                     std::string_view hook) const {
  auto it = events_.find(event);
  ACCEL_CHECK(it != events_.end(), InvalidArgument, hook, "(): event ", event,
              " is not a live event of '", name(),
              "'; create it with createEvent() and do not use it after destroyEvent()");
  return it->second;
}

EventId TestHooks::createEventImpl(DeviceIndex index, EventFlags flags) {
  enter("createEvent");
  std::lock_guard<std::mutex> lock(mutex_);
  EventId id = next_event_++;
  events_[id] = EventRecord{index, flags, false, {}};
  markPrimaryContext(index);
  return id;
}

void TestHooks::destroyEventImpl(EventId event) noexcept {
  try {
    enter("destroyEvent");
  } catch (...) {
    // destroyEvent never fails; an armed failure only reaches the observer.
  }
  std::lock_guard<std::mutex> lock(mutex_);
  events_.erase(event);
}

void TestHooks::recordEventImpl(EventId event, Stream stream) {
  enter("recordEvent");
  std::lock_guard<std::mutex> lock(mutex_);
  const EventRecord& record = eventLocked(event, "recordEvent");
  ACCEL_CHECK(record.device == stream.device.index(), InvalidArgument,
              "recordEvent(): event ", event, " was created on '", name(), ":",
              int(record.device), "' but the stream is ", stream,
              "; record an event on its own device");
  requireKnownStreamLocked(stream, "recordEvent");
  EventRecord& writable = events_[event];
  writable.recorded = true;
  writable.recorded_at = std::chrono::steady_clock::now();
}

void TestHooks::blockStreamImpl(EventId event, Stream stream) {
  enter("blockStream");
  std::lock_guard<std::mutex> lock(mutex_);
  (void)eventLocked(event, "blockStream");
  requireKnownStreamLocked(stream, "blockStream");
}

bool TestHooks::queryEventImpl(EventId event) const {
  enter("queryEvent");
  std::lock_guard<std::mutex> lock(mutex_);
  (void)eventLocked(event, "queryEvent");
  return true;  // work is synchronous: a recorded event has completed
}

void TestHooks::synchronizeEventImpl(EventId event) const {
  enter("synchronizeEvent");
  std::lock_guard<std::mutex> lock(mutex_);
  (void)eventLocked(event, "synchronizeEvent");
}

double TestHooks::elapsedTimeImpl(EventId start, EventId end) const {
  enter("elapsedTime");
  std::lock_guard<std::mutex> lock(mutex_);
  const EventRecord* records[2] = {&eventLocked(start, "elapsedTime"),
                                   &eventLocked(end, "elapsedTime")};
  const EventId ids[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    ACCEL_CHECK(records[i]->flags.enable_timing, InvalidArgument, "elapsedTime(): event ",
                ids[i],
                " was created without enable_timing; create both events with "
                "EventFlags{.enable_timing = true}");
    ACCEL_CHECK(records[i]->recorded, DeviceError, "elapsedTime(): event ", ids[i],
                " has not been recorded; call recordEvent() on both events first");
  }
  return std::chrono::duration<double, std::milli>(records[1]->recorded_at -
                                                   records[0]->recorded_at)
      .count();
}

// ---- memory ----

MemoryStats TestHooks::memoryStatsImpl(DeviceIndex index) const {
  enter("memoryStats");
  std::lock_guard<std::mutex> lock(mutex_);
  return devices_[index].stats;
}

void TestHooks::resetPeakMemoryStatsImpl(DeviceIndex index) {
  enter("resetPeakMemoryStats");
  std::lock_guard<std::mutex> lock(mutex_);
  MemoryStats& s = devices_[index].stats;
  for (Stat* stat : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                     &s.requested_bytes, &s.allocations, &s.segments}) {
    stat->peak = stat->current;
  }
}

void TestHooks::emptyCacheImpl() {
  enter("emptyCache");  // nothing is cached: every free returns memory at once
}

void TestHooks::recordMemoryHistoryImpl(const MemoryHistoryOptions& options) {
  enter("recordMemoryHistory");
  std::lock_guard<std::mutex> lock(mutex_);
  // Enabling starts a fresh trace; disabling keeps what was recorded so that a
  // snapshot taken afterwards still shows it.
  if (options.enabled != HistoryRecording::Off) {
    for (DeviceState& device : devices_) device.trace.clear();
  }
  history_ = options;
}

MemorySnapshot TestHooks::memorySnapshotImpl(const MemorySnapshotOptions& options) const {
  enter("memorySnapshot");
  std::lock_guard<std::mutex> lock(mutex_);
  auto selected = [&](DeviceIndex index) {
    return options.all_devices || index == options.device;
  };
  MemorySnapshot snapshot;
  for (const auto& [address, a] : device_allocations_) {
    if (!selected(a.device)) continue;
    MemorySegment segment;
    segment.device = Device(deviceType(), a.device);
    segment.address = address;
    segment.total_size = a.size;
    segment.allocated_size = a.size;
    segment.stream = Stream(segment.device, kDefaultStreamId);
    segment.is_large = a.size >= (std::size_t{1} << 20);
    segment.blocks.push_back(
        MemoryBlock{address, a.size, a.requested, MemoryBlock::State::Allocated});
    snapshot.segments.push_back(std::move(segment));
  }
  if (options.include_trace) {
    snapshot.device_traces.resize(static_cast<std::size_t>(device_count_));
    for (int i = 0; i < device_count_; ++i) {
      if (!selected(static_cast<DeviceIndex>(i))) continue;
      const std::deque<MemoryTraceEntry>& trace = devices_[i].trace;
      snapshot.device_traces[i].assign(trace.begin(), trace.end());
    }
  }
  return snapshot;
}

void TestHooks::attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer) {
  enter("attachOutOfMemoryObserver");
  std::lock_guard<std::mutex> lock(mutex_);
  oom_observers_.push_back(std::move(observer));
}

// ---- graphs ----

TestHooks::GraphRecord& TestHooks::graphLocked(GraphId graph, std::string_view hook) {
  auto it = graphs_.find(graph);
  ACCEL_CHECK(it != graphs_.end(), InvalidArgument, hook, "(): graph ", graph,
              " is not a live graph of '", name(),
              "'; create it with graphCreate() and do not use it after graphDestroy()");
  return it->second;
}

const TestHooks::GraphRecord& TestHooks::graphLocked(GraphId graph,
                                                     std::string_view hook) const {
  return const_cast<TestHooks*>(this)->graphLocked(graph, hook);
}

GraphId TestHooks::graphCreateImpl(bool keep_graph) {
  enter("graphCreate");
  std::lock_guard<std::mutex> lock(mutex_);
  GraphId id = next_graph_++;
  graphs_[id] = GraphRecord{keep_graph, GraphState::Empty, {}, {}, 0};
  return id;
}

void TestHooks::graphDestroyImpl(GraphId graph) {
  enter("graphDestroy");
  std::lock_guard<std::mutex> lock(mutex_);
  const GraphRecord& record = graphLocked(graph, "graphDestroy");
  ACCEL_CHECK(record.state != GraphState::Capturing, DeviceError,
              "graphDestroy(): graph ", graph, " is still capturing ", record.stream,
              "; call graphCaptureEnd() before destroying it");
  graphs_.erase(graph);
}

void TestHooks::graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) {
  enter("graphCaptureBegin");
  const Stream stream = currentStreamOf(getCurrentDevice());
  std::lock_guard<std::mutex> lock(mutex_);
  GraphRecord& record = graphLocked(graph, "graphCaptureBegin");
  ACCEL_CHECK(record.state == GraphState::Empty, DeviceError,
              "graphCaptureBegin(): graph ", graph,
              " already holds a capture; call graphReset() before capturing again");
  requireNotCapturingLocked(stream, "graphCaptureBegin");
  record.state = GraphState::Capturing;
  record.stream = stream;
  record.pool = pool.isDefault() ? MempoolId{next_pool_++, 0} : pool;
}

void TestHooks::graphCaptureEndImpl(GraphId graph) {
  enter("graphCaptureEnd");
  const Stream current = currentStreamOf(getCurrentDevice());
  std::lock_guard<std::mutex> lock(mutex_);
  GraphRecord& record = graphLocked(graph, "graphCaptureEnd");
  ACCEL_CHECK(record.state == GraphState::Capturing, DeviceError,
              "graphCaptureEnd(): graph ", graph,
              " is not capturing; call graphCaptureBegin() first");
  ACCEL_CHECK(current == record.stream, DeviceError, "graphCaptureEnd(): graph ", graph,
              " is capturing ", record.stream, " but the current stream is ", current,
              "; end the capture with the captured stream current");
  // Without keep_graph the graph is instantiated at once, as CUDA graphs are.
  record.state = record.keep_graph ? GraphState::Captured : GraphState::Instantiated;
}

void TestHooks::graphInstantiateImpl(GraphId graph) {
  enter("graphInstantiate");
  std::lock_guard<std::mutex> lock(mutex_);
  GraphRecord& record = graphLocked(graph, "graphInstantiate");
  ACCEL_CHECK(record.state == GraphState::Captured ||
                  (record.state == GraphState::Instantiated && record.keep_graph),
              DeviceError, "graphInstantiate(): graph ", graph,
              record.state == GraphState::Instantiated
                  ? " was created without keep_graph and was instantiated by "
                    "graphCaptureEnd(); replay it directly"
                  : " holds no finished capture; capture it first");
  record.state = GraphState::Instantiated;
}

void TestHooks::graphReplayImpl(GraphId graph) {
  enter("graphReplay");
  std::lock_guard<std::mutex> lock(mutex_);
  GraphRecord& record = graphLocked(graph, "graphReplay");
  ACCEL_CHECK(record.state == GraphState::Instantiated, DeviceError,
              "graphReplay(): graph ", graph, " is not instantiated; capture it",
              record.keep_graph ? " and call graphInstantiate()" : "", " first");
  ++record.replays;
}

void TestHooks::graphResetImpl(GraphId graph) {
  enter("graphReset");
  std::lock_guard<std::mutex> lock(mutex_);
  GraphRecord& record = graphLocked(graph, "graphReset");
  ACCEL_CHECK(record.state != GraphState::Capturing, DeviceError, "graphReset(): graph ",
              graph, " is capturing; call graphCaptureEnd() first");
  record = GraphRecord{record.keep_graph, GraphState::Empty, {}, {}, 0};
}

MempoolId TestHooks::graphPoolImpl(GraphId graph) const {
  enter("graphPool");
  std::lock_guard<std::mutex> lock(mutex_);
  return graphLocked(graph, "graphPool").pool;
}

// ---- registration ----

TestHooks& registerTestBackend(std::string_view type_name, int device_count) {
  static std::mutex* mutex = new std::mutex();  // never destroyed, like the hooks
  DeviceType type = registerDeviceType(type_name);
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
