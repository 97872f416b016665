// TestHooks: an in-memory backend that implements every hook group, so that
// the core and the conformance suite can be tested without a real device.
//
// Work is synchronous: anything enqueued has finished by the time the call
// returns, so streams and events always query as complete. Device memory is
// aligned host memory, tracked per allocation so that getDeviceFromPtr
// resolves interior pointers and rejects anything else. Graph capture records
// no work; it is a state machine (create, capture, instantiate, replay) that
// rejects misuse the way a device would.
//
//   accel::testing::TestHooks& hooks = accel::testing::registerTestBackend();
//   accel::DeviceGuard guard(accel::Device::parse("testdev:1"));
//   hooks.failHook("getCurrentStream", 1);  // the next call throws DeviceError
//
// Test knobs (failHook, failNextInits, setHookObserver, setAvailable,
// setMemoryCapacity) change behaviour at run time. While no failure is armed
// and no observer is set, each hook pays one relaxed atomic load for them, so
// the hooks can be benchmarked as a backend's fast path.
//
// Thread-safety: every member is thread-safe. The current device and the
// current stream of each device are per thread and per TestHooks object.
//
// Lifetime: a registered TestHooks lives forever, like every registered
// hooks object. An unregistered one (constructed directly in a test) must
// outlive every DataPtr its allocators handed out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "accel/default_generators.h"
#include "accel/hooks.h"

namespace accel::testing {

class TestHooks : public AcceleratorHooks {
 public:
  // Every optional group; a TestHooks declares them all.
  static constexpr Capabilities kAllGroups{HookGroup::Device,        HookGroup::Streams,
                                           HookGroup::Events,        HookGroup::Memory,
                                           HookGroup::MemoryHistory, HookGroup::Graphs};
  // Device memory capacity per device until setMemoryCapacity changes it.
  static constexpr std::size_t kDefaultMemoryCapacity = std::size_t{1} << 30;
  // Allocation sizes are rounded up to this and addresses aligned to it.
  static constexpr std::size_t kAllocationAlignment = 256;
  // streamPriorityRange(): {lowest, greatest}.
  static constexpr int kLowestStreamPriority = -1;
  static constexpr int kGreatestStreamPriority = 1;
  // failHook's `times` for a failure that stays armed until cleared.
  static constexpr int kAlways = -1;

  // A backend for `type` with `device_count` devices. Throws InvalidArgument
  // if device_count is outside [0, kMaxDevicesPerType], or if more than 256
  // TestHooks objects are alive at once.
  TestHooks(DeviceType type, int device_count);
  ~TestHooks() override;

  // ---- test knobs and counters (all thread-safe) ----

  // The device count given at construction (deviceCount() may be made to
  // fail by failHook; this never is).
  [[nodiscard]] int configuredDeviceCount() const noexcept { return device_count_; }
  // Calls of init() so far, failed ones included.
  [[nodiscard]] int initCalls() const noexcept;
  // True once an init() call succeeded.
  [[nodiscard]] bool initialized() const noexcept;
  // The next `count` calls of init() throw DeviceError. Same as
  // failHook("init", count).
  void failNextInits(int count);
  // Makes `hook` (its public name, e.g. "getCurrentStream", or "allocate" /
  // "allocatePinned" for the allocators) throw DeviceError on its next
  // `times` calls, or on every call with kAlways. Probes then answer their
  // benign default, as the core guarantees. Throws InvalidArgument for a name
  // that is not one of this backend's hooks, or for times == 0 or < -1.
  void failHook(std::string_view hook, int times = kAlways);
  // Disarms every failure armed with failHook or failNextInits.
  void clearHookFailures();
  // Called with the hook's name at the start of every hook call, on the
  // calling thread, before an armed failure throws. Must be thread-safe and
  // must not call back into this TestHooks. An empty function removes it.
  using HookObserver = std::function<void(std::string_view hook)>;
  void setHookObserver(HookObserver observer);
  // isAvailable() answers `available && deviceCount() > 0`. Default true.
  void setAvailable(bool available) noexcept;
  // Device memory capacity, per device, in bytes. An allocation that would
  // take a device's reserved bytes past it calls the OOM observers and
  // throws OutOfMemory.
  void setMemoryCapacity(std::size_t bytes_per_device) noexcept;
  [[nodiscard]] std::size_t memoryCapacity() const noexcept;
  // Live allocations handed out by the device allocators / the pinned one.
  [[nodiscard]] std::size_t liveDeviceAllocations() const;
  [[nodiscard]] std::size_t livePinnedAllocations() const;
  // How often graphReplay(graph) succeeded since it was created or reset.
  // Throws InvalidArgument for an unknown graph.
  [[nodiscard]] std::uint64_t graphReplayCount(GraphId graph) const;

 protected:
  bool isBuiltImpl() const override;
  bool isAvailableImpl() const override;
  int deviceCountImpl() const override;
  DeviceIndex getCurrentDeviceImpl() const override;
  void setCurrentDeviceImpl(DeviceIndex index) override;
  DeviceIndex exchangeDeviceImpl(DeviceIndex index) override;
  void initImpl() override;
  bool hasPrimaryContextImpl(DeviceIndex index) const override;
  Generator getDefaultGeneratorImpl(DeviceIndex index) override;
  Generator getNewGeneratorImpl(DeviceIndex index) override;
  Device getDeviceFromPtrImpl(const void* ptr) const override;
  Allocator& getPinnedMemoryAllocatorImpl() override;
  bool isPinnedPtrImpl(const void* ptr) const override;
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override;

  void deviceSynchronizeImpl(DeviceIndex index) override;
  std::string showConfigImpl() const override;
  DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const override;

  Stream getCurrentStreamImpl(DeviceIndex index) const override;
  Stream getDefaultStreamImpl(DeviceIndex index) const override;
  Stream getNewStreamImpl(DeviceIndex index, int priority) override;
  void setCurrentStreamImpl(Stream stream) override;
  Stream exchangeStreamImpl(Stream stream) override;
  bool queryStreamImpl(Stream stream) const override;
  void synchronizeStreamImpl(Stream stream) const override;
  std::pair<int, int> streamPriorityRangeImpl() const override;

  EventId createEventImpl(DeviceIndex index, EventFlags flags) override;
  void destroyEventImpl(EventId event) noexcept override;
  void recordEventImpl(EventId event, Stream stream) override;
  void blockStreamImpl(EventId event, Stream stream) override;
  bool queryEventImpl(EventId event) const override;
  void synchronizeEventImpl(EventId event) const override;
  double elapsedTimeImpl(EventId start, EventId end) const override;

  MemoryStats memoryStatsImpl(DeviceIndex index) const override;
  void resetPeakMemoryStatsImpl(DeviceIndex index) override;
  void emptyCacheImpl() override;

  void recordMemoryHistoryImpl(const MemoryHistoryOptions& options) override;
  MemorySnapshot memorySnapshotImpl(const MemorySnapshotOptions& options) const override;
  void attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer) override;

  GraphId graphCreateImpl(bool keep_graph) override;
  void graphDestroyImpl(GraphId graph) override;
  void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) override;
  void graphCaptureEndImpl(GraphId graph) override;
  void graphInstantiateImpl(GraphId graph) override;
  void graphReplayImpl(GraphId graph) override;
  void graphResetImpl(GraphId graph) override;
  MempoolId graphPoolImpl(GraphId graph) const override;

 private:
  class DeviceAllocator;
  class PinnedAllocator;
  struct AllocationContext;
  friend class DeviceAllocator;
  friend class PinnedAllocator;

  struct Allocation {
    std::size_t size = 0;       // rounded to kAllocationAlignment
    std::size_t requested = 0;  // as asked
    DeviceIndex device = 0;     // -1 for pinned host memory
  };
  struct EventRecord {
    DeviceIndex device = 0;
    EventFlags flags;
    bool recorded = false;
    std::chrono::steady_clock::time_point recorded_at;
  };
  enum class GraphState : std::uint8_t { Empty, Capturing, Captured, Instantiated };
  struct GraphRecord {
    bool keep_graph = false;
    GraphState state = GraphState::Empty;
    MempoolId pool;
    Stream stream;  // the captured stream, while capturing and after
    std::uint64_t replays = 0;
  };
  struct DeviceState {
    StreamId next_stream_id = 1;
    std::set<StreamId> streams;  // created by getNewStream; 0 is implicit
    MemoryStats stats;
    std::deque<MemoryTraceEntry> trace;
  };
  struct Fault {
    std::string hook;
    int remaining;  // kAlways, or calls left
  };

  // Called first by every hook: applies armed failures and the observer.
  void enter(std::string_view hook) const {
    if (instrumented_.load(std::memory_order_relaxed)) [[unlikely]]
      enterSlow(hook);
  }
  void enterSlow(std::string_view hook) const;
  void updateInstrumentedLocked() const;

  DataPtr allocateDevice(DeviceIndex index, std::size_t bytes);
  DataPtr allocatePinned(std::size_t bytes);
  void release(AllocationContext* context) noexcept;
  void recordTraceLocked(DeviceIndex index, MemoryTraceEntry::Action action,
                         std::uintptr_t address, std::size_t size, bool segment_event);
  void markPrimaryContext(DeviceIndex index) noexcept;
  // Throws InvalidArgument unless stream.id exists on its device. Lock held.
  void requireKnownStreamLocked(Stream stream, std::string_view hook) const;
  // Throws DeviceError if `stream` is being captured into a graph. Lock held.
  void requireNotCapturingLocked(Stream stream, std::string_view hook) const;
  const EventRecord& eventLocked(EventId event, std::string_view hook) const;
  GraphRecord& graphLocked(GraphId graph, std::string_view hook);
  const GraphRecord& graphLocked(GraphId graph, std::string_view hook) const;
  Stream currentStreamOf(DeviceIndex index) const;

  // This object's entry in the thread-local current-device table: held for
  // the object's lifetime, with a uid that tells it apart from earlier holders.
  struct ThreadSlot {
    ThreadSlot();
    ~ThreadSlot();
    ThreadSlot(const ThreadSlot&) = delete;
    ThreadSlot& operator=(const ThreadSlot&) = delete;
    std::uint64_t uid;
    int index;
  };

  const int device_count_;
  const ThreadSlot slot_;

  mutable std::atomic<bool> instrumented_{false};
  std::atomic<int> init_calls_{0};
  std::atomic<bool> initialized_{false};
  std::atomic<bool> available_{true};
  std::atomic<std::size_t> capacity_{kDefaultMemoryCapacity};
  std::unique_ptr<std::atomic<bool>[]> primary_context_;

  mutable std::mutex instrument_mutex_;
  mutable std::vector<Fault> faults_;
  std::shared_ptr<const HookObserver> observer_;

  DefaultGenerators default_generators_;
  std::vector<std::unique_ptr<DeviceAllocator>> device_allocators_;
  std::unique_ptr<PinnedAllocator> pinned_allocator_;

  mutable std::mutex mutex_;  // guards everything below
  std::vector<DeviceState> devices_;
  std::map<std::uintptr_t, Allocation> device_allocations_;
  std::map<std::uintptr_t, Allocation> pinned_allocations_;
  std::vector<OutOfMemoryObserver> oom_observers_;
  MemoryHistoryOptions history_{HistoryRecording::Off, 0, false};
  std::map<EventId, EventRecord> events_;
  EventId next_event_ = 1;
  std::map<GraphId, GraphRecord> graphs_;
  GraphId next_graph_ = 1;
  std::uint64_t next_pool_ = 1;
};

// Registers the device type `type_name` and a TestHooks with `device_count`
// devices for it, and returns the hooks. Idempotent: a second call with the
// same name returns the same object. Throws InvalidArgument for a bad type
// name, when the type already has a backend that is not a TestHooks, or when
// it has a TestHooks with another device count. Thread-safe.
TestHooks& registerTestBackend(std::string_view type_name = "testdev",
                               int device_count = 2);

}  // namespace accel::testing
