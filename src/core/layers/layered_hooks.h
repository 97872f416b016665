// Internal: the decorator through which the hook layers (hook_layer.h) see a
// backend's calls.
//
// A LayeredHooks wraps the hooks a backend registered (whatever registered
// them: a C plugin, a static registration, registerHooks) and is itself an
// AcceleratorHooks: the core's public wrappers run their checks on it first
// (index ranges, streams, groups, copy ranges), then each *Impl here builds
// a HookCall, calls every layer's before(), forwards to the backend's public
// hook (which checks again and calls its own *Impl) and calls after(). The
// device and pinned allocators it hands out wrap the backend's, so that the
// layers see allocations and frees (and may hold a free back).
//
// The layer registry (layer_registry.cpp) creates at most one decorator per
// device type, interposes it in the process hooks table and the context's
// ready slot while any layer is added, and takes it out again when the last
// one is removed; the decorator is never destroyed (a thread may still be
// inside it), and is reused when a layer is added again.
//
// Thread-safety: as every hooks object. Lifetime: never destroyed.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/hooks.h"
#include "layers/hook_layer.h"

namespace accel::detail {

class ValidationLayer;

// The layers added now: an immutable snapshot, published with a release
// store and never freed (a caller may still walk an old one).
struct LayerList {
  std::vector<HookLayer*> layers;
  bool wants_times = false;  // any layer's wantsTimes()
  // The first of `layers` whose keepsBlockNotes() is true, or null.
  HookLayer* note_keeper = nullptr;
  // The validation layer when it is the only layer: the decorator's
  // allocator calls its memory callbacks directly (layered_allocator.cpp).
  ValidationLayer* validation_alone = nullptr;
};

// The published snapshot (layer_registry.cpp); read through currentLayers().
extern constinit std::atomic<const LayerList*> g_current_layers;

// The current snapshot; null or empty when no layer is added. One acquire
// load (of a constant-initialised global: no guard of a function's static
// on the allocator's path).
[[nodiscard]] inline const LayerList* currentLayers() noexcept {
  return g_current_layers.load(std::memory_order_acquire);
}

class LayeredAllocator;

class LayeredHooks final : public AcceleratorHooks {
 public:
  explicit LayeredHooks(AcceleratorHooks& inner);
  ~LayeredHooks() override;

  // The backend's own hooks. Never throws.
  [[nodiscard]] AcceleratorHooks& inner() const noexcept { return inner_; }

 protected:
  Capabilities settleCapabilitiesImpl() const override;

  bool isBuiltImpl() const override;
  bool isAvailableImpl() const override;
  int deviceCountImpl() const override;
  DeviceIndex getCurrentDeviceImpl() const override;
  void setCurrentDeviceImpl(DeviceIndex index) override;
  DeviceIndex exchangeDeviceImpl(DeviceIndex index) override;
  void initImpl() override;
  bool hasPrimaryContextImpl(DeviceIndex index) const override;
  const Generator& getDefaultGeneratorImpl(DeviceIndex index) override;
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
  std::pair<int, int> newStreamPriorityRangeImpl(DeviceIndex index) const override;

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
  DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const override;
  void resetAccumulatedMemoryStatsImpl(DeviceIndex index) override;
  void setMemoryFractionImpl(double fraction, DeviceIndex index) override;
  MemoryStats hostMemoryStatsImpl() const override;

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

  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream stream) override;
  void fillRandomImpl(Stream stream, DeviceFill kind, void* data, std::size_t count,
                      double a, double b, const Generator& generator) override;

  [[nodiscard]] memory::CachingAllocator* coreDeviceCache() const override;
  [[nodiscard]] memory::PinnedCachingAllocator* corePinnedCache() const override;
  [[nodiscard]] Device deviceQueryForChecks(const void* ptr) const override;
  [[nodiscard]] bool pinnedQueryForChecks(const void* ptr) const noexcept override;

 private:
  // A HookCall of `hook` for this backend, begin time taken.
  [[nodiscard]] HookCall callOf(HookId hook) const noexcept;

  AcceleratorHooks& inner_;
  // The allocators handed out, created on first use and never destroyed
  // while this object lives (callers keep references to them).
  std::mutex allocators_mutex_;
  std::array<std::atomic<LayeredAllocator*>, kMaxDevicesPerType> device_allocators_{};
  std::atomic<LayeredAllocator*> pinned_allocator_{nullptr};
  std::vector<std::unique_ptr<LayeredAllocator>> owned_allocators_;
};

}  // namespace accel::detail
