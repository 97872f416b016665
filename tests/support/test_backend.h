// TestHooks: an in-memory backend that implements every hook group, so that
// the core and the conformance suite can be tested without a real device.
//
// Built on the backend kit (kit::SynchronousDeviceHooks): work is synchronous,
// so streams and events are the kit's; the current device and streams are
// per thread and per object; device memory is aligned host memory recorded in
// the kit's AddressMap, so getDeviceFromPtr resolves interior pointers and
// reports foreign, freed and pinned pointers clearly. What this file adds is
// what only a test double needs: exact memory statistics and history over a
// settable capacity, a graph state machine that rejects misuse as a device
// would, and the knobs below.
//
//   accel::testing::TestHooks& hooks = accel::testing::registerTestBackend();
//   accel::DeviceGuard guard(accel::Device::parse("testdev:1"));
//   hooks.failHook("getCurrentStream", 1);  // the next call throws DeviceError
//
// Knobs (failHook, failNextInits, setHookObserver, setAvailable,
// setMemoryCapacity) change behaviour at run time. While no failure is armed
// and no observer is set, a hook pays one relaxed load for them (the kit's
// call tracing), so the hooks can be benchmarked as a backend's fast path.
//
// Thread-safety: every member is thread-safe.
// Lifetime: a registered TestHooks lives forever, like every registered hooks
// object. An unregistered one (constructed directly in a test) must outlive
// every DataPtr its allocators handed out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "accel/hook_catalogue.h"
#include "accel/kit/synchronous_device.h"

namespace accel::testing {

class TestHooks : public kit::SynchronousDeviceHooks {
 public:
  // Every optional group; a TestHooks declares them all.
  static constexpr Capabilities kAllGroups{HookGroup::Device,        HookGroup::Streams,
                                           HookGroup::Events,        HookGroup::Memory,
                                           HookGroup::MemoryHistory, HookGroup::Graphs};
  static constexpr std::size_t kDefaultMemoryCapacity = std::size_t{1}
                                                        << 30;  // per device
  // Allocation sizes are rounded up to this and addresses aligned to it.
  static constexpr std::size_t kAllocationAlignment = 256;
  static constexpr int kLowestStreamPriority = -1;  // streamPriorityRange()
  static constexpr int kGreatestStreamPriority = 1;
  static constexpr int kAlways = -1;  // failHook: until cleared

  // Throws InvalidArgument if device_count is outside [0, kMaxDevicesPerType]
  // or too many hooks objects are alive (kit::ThreadCurrent::kMaxLive).
  TestHooks(DeviceType type, int device_count);
  ~TestHooks() override;

  // ---- test knobs and counters (all thread-safe) ----
  // The count given at construction (failHook can make deviceCount() fail).
  [[nodiscard]] int configuredDeviceCount() const noexcept;
  // Calls of init() so far, failed ones included; true once one succeeded.
  [[nodiscard]] int initCalls() const noexcept;
  [[nodiscard]] bool initialized() const noexcept;
  // The next `count` calls of init() throw DeviceError (failHook("init", count)).
  void failNextInits(int count);
  // Makes `hook` (a public hook name, or "allocate" / "allocatePinned" for
  // the allocators) throw DeviceError on its next `times` calls, or always.
  // Probes then answer their benign default, as the core guarantees. Throws
  // InvalidArgument for an unknown name, or times == 0 or < -1.
  void failHook(std::string_view hook, int times = kAlways);
  // The same for a hook of the catalogue (hookInfo(hook).name).
  void failHook(HookId hook, int times = kAlways) {
    failHook(hookInfo(hook).name, times);
  }
  void clearHookFailures();
  // Called with the hook's name at the start of every hook call, before an
  // armed failure throws. Must be thread-safe and must not call back into
  // this object. An empty function removes it.
  using HookObserver = std::function<void(std::string_view hook)>;
  void setHookObserver(HookObserver observer);
  // isAvailable() answers `available && deviceCount() > 0`. Default true.
  void setAvailable(bool available) noexcept;
  // Per device. An allocation past it calls the OOM observers and throws
  // OutOfMemory.
  void setMemoryCapacity(std::size_t bytes_per_device) noexcept;
  [[nodiscard]] std::size_t memoryCapacity() const noexcept;
  // Live allocations of the device allocators / the pinned allocator.
  [[nodiscard]] std::size_t liveDeviceAllocations() const;
  [[nodiscard]] std::size_t livePinnedAllocations() const;
  // Successful replays since creation or reset. InvalidArgument if unknown.
  [[nodiscard]] std::uint64_t graphReplayCount(GraphId graph) const;

 protected:
  void onHookCall(HookId hook) const override;

  bool isAvailableImpl() const override;
  void initImpl() override;
  Allocator& getPinnedMemoryAllocatorImpl() override;
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override;

  void deviceSynchronizeImpl(DeviceIndex index) override;
  std::string showConfigImpl() const override;
  DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const override;
  bool queryStreamImpl(Stream stream) const override;
  void synchronizeStreamImpl(Stream stream) const override;
  std::pair<int, int> streamPriorityRangeImpl() const override;

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
  struct State;
  class HostAllocator;
  // The observer and armed failures, for a hook or an allocator's name.
  void traced(std::string_view hook) const;
  DataPtr allocate(DeviceIndex index, std::size_t bytes);  // index -1: pinned
  void release(void* base) noexcept;
  // Appends to device `index`'s history as the options ask. The mutex is held.
  void recordTrace(DeviceIndex index, MemoryTraceEntry::Action action,
                   std::uintptr_t address, std::size_t size);

  std::unique_ptr<State> state_;
};

// Registers the device type `type_name` and a TestHooks with `device_count`
// devices for it, and returns the hooks. Idempotent: a second call with the
// same name returns the same object. Throws InvalidArgument for a bad type
// name, when the type already has a backend that is not a TestHooks, or when
// it has a TestHooks with another device count. Thread-safe.
TestHooks& registerTestBackend(std::string_view type_name = "testdev",
                               int device_count = 2);

}  // namespace accel::testing
