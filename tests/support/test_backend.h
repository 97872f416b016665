// TestHooks: an in-memory backend that implements every hook group, so that
// the core and the conformance suite can be tested without a real device.
//
// Built like a real backend: kit::SynchronousDeviceHooks gives the low and
// high groups, streams and events; the core CachingAllocator over aligned
// host memory gives the device allocators and the memory groups, a
// PinnedCachingAllocator pinned memory; the kit's copies (memcpy) serve the
// copies and fill groups, since its device memory is host memory. This file adds a
// graph state machine that rejects misuse as a device would, and the knobs
// below:
//
//   accel::testing::TestHooks& hooks = accel::testing::registerTestBackend();
//   hooks.failHook(accel::HookId::getCurrentStream, 1);  // the next call throws
//
// Unarmed, the knobs cost a hook one relaxed load (the kit's call tracing),
// so the hooks can be benchmarked as a backend's fast path. Not traced: the
// memory groups (the core's), and getDefaultGenerator once initialised (the
// core serves it inline).
//
// Thread-safety: every member is thread-safe. Lifetime: a registered one
// lives forever; one made in a test must outlive its allocators' DataPtrs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "accel/hook_catalogue.h"
#include "accel/kit/synchronous_device.h"
#include "accel/memory/memory_hooks.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "accel/memory/size_rules.h"

namespace accel::testing {

class TestHooks : public memory::CachingAllocatorHooks<kit::SynchronousDeviceHooks> {
  friend TestHooks& registerTestBackend(std::string_view, int);

 public:
  static constexpr std::size_t kDefaultMemoryCapacity = std::size_t{1} << 30;  // each
  static constexpr std::size_t kAllocationAlignment = memory::kMinBlockSize;   // blocks
  static constexpr int kAlways = -1;  // failHook: until cleared

  // Throws InvalidArgument if device_count is outside [0, kMaxDevicesPerType]
  // or too many hooks objects are alive (kit::ThreadCurrent::kMaxLive).
  TestHooks(DeviceType type, int device_count);
  ~TestHooks() override;

  // ---- knobs (none throws unless said) ----
  // Calls of init() so far, failed ones included.
  [[nodiscard]] int initCalls() const noexcept { return init_calls_.load(); }
  // Makes `hook` (a traced hook's name, or "allocate" / "allocatePinned" for
  // the allocators) throw DeviceError on its next `times` calls, or always;
  // probes then answer their benign default. InvalidArgument for a name of
  // the memory groups or no hook, or times == 0 or < -1.
  void failHook(std::string_view hook, int times = kAlways);
  void failHook(HookId hook, int times = kAlways) {
    failHook(hookInfo(hook).name, times);
  }
  void clearHookFailures();
  // Called with the name of every traced call, before an armed failure
  // throws; thread-safe, must not call back into this object. {} removes it.
  using HookObserver = std::function<void(std::string_view hook)>;
  void setHookObserver(HookObserver observer);
  // isAvailable() answers `available && deviceCount() > 0`. Default true.
  void setAvailable(bool available) noexcept { available_.store(available); }
  // Device memory, as the cache's limit per device (0: none); past it the
  // core's out-of-memory path runs (cache freed, observers, OutOfMemory).
  void setMemoryCapacity(std::size_t bytes);
  [[nodiscard]] std::size_t memoryCapacity() const noexcept { return capacity_.load(); }

 protected:
  void onHookCall(HookId hook) const override;
  memory::CachingAllocator& cachingAllocator() const override { return cache_; }
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override {
    return &pinned_;
  }

  bool isAvailableImpl() const override;
  void initImpl() override;
  Allocator& getPinnedMemoryAllocatorImpl() override;
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override;
  std::string showConfigImpl() const override;
  DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const override;

  GraphId graphCreateImpl(bool keep_graph) override;
  void graphDestroyImpl(GraphId graph) override;
  void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) override;
  void graphCaptureEndImpl(GraphId graph) override;
  void graphInstantiateImpl(GraphId graph) override;
  void graphReplayImpl(GraphId graph) override;
  void graphResetImpl(GraphId graph) override;
  MempoolId graphPoolImpl(GraphId graph) const override;

 private:
  static constexpr std::string_view kAllocate = "allocate";
  static constexpr std::string_view kAllocatePinned = "allocatePinned";
  class HostSegments;
  class TracedAllocator;
  // Ended: instantiated by graphCaptureEnd (no keep_graph); replay only.
  enum class Phase : std::uint8_t { Empty, Capturing, Captured, Instantiated, Ended };
  struct Graph {
    bool keep_graph = false;
    Phase phase = Phase::Empty;
    MempoolId pool{};
  };

  // The observer and armed failures, for a hook or an allocator's name.
  void traced(std::string_view hook) const;
  // Live graph `id` in one of `phases` (any if empty) for `hook`: else
  // InvalidArgument (not live) or DeviceError (wrong phase). graph_mutex_ held.
  Graph& graph(GraphId id, HookId hook, std::initializer_list<Phase> phases = {}) const;
  // Traces `hook`, then runs `step` on the graph under the lock.
  template <class Step>
  auto onGraph(GraphId id, HookId hook, std::initializer_list<Phase> phases,
               Step step) const {
    enter(hook);
    std::lock_guard<std::mutex> lock(graph_mutex_);
    return step(graph(id, hook, phases));
  }

  const int device_count_;
  std::atomic<int> init_calls_{0};
  std::atomic<bool> available_{true};
  std::atomic<std::size_t> capacity_{kDefaultMemoryCapacity};

  mutable std::mutex instrument_mutex_;                     // guards the two below
  mutable std::map<std::string, int, std::less<>> faults_;  // name -> calls left
  std::shared_ptr<const HookObserver> observer_;

  // Before the allocators, which return their segments to them.
  std::unique_ptr<HostSegments> device_segments_;
  std::unique_ptr<HostSegments> pinned_segments_;
  mutable memory::CachingAllocator cache_;
  mutable memory::PinnedCachingAllocator pinned_;
  std::vector<std::unique_ptr<TracedAllocator>> allocators_;  // [0]: pinned; [i + 1]: i

  mutable std::mutex graph_mutex_;  // guards the two below
  mutable std::map<GraphId, Graph> graphs_;
  GraphId next_graph_ = 1;
};

// Registers type `type_name` served by a TestHooks of `device_count` devices
// and returns it; idempotent for the same name and count. InvalidArgument for
// a bad name or a type served otherwise. Thread-safe.
TestHooks& registerTestBackend(std::string_view type_name = "testdev",
                               int device_count = 2);

}  // namespace accel::testing
