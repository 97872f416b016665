// OpenRegHooks: openreg's implementation of the hooks contract.
//
// A thin layer: AcceleratorHooks (the core) has already validated device
// indices, streams and capability groups, and has run initImpl once (which
// initialises openreg's runtime), when an *Impl function runs; each one here
// delegates to the runtime. Nothing here calls the context. The probes
// (isAvailable, deviceCount, hasPrimaryContext, isPinnedPtr) never initialise
// anything: they read the configuration, or state that exists only once the
// runtime does.
//
// Declared groups: device, streams, events, memory, memory_history, graphs,
// copies (through the runtime's copy path, copies.h).
// The memory groups come from the core caching allocator through
// memory::CachingAllocatorHooks; openreg adds only the lost-device check to
// memoryStats and resetPeakMemoryStats.
//
// Thread-safety: every function is thread-safe. Lifetime: registered with
// registerHooks() and never destroyed.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "accel/default_generators.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks.h"
#include "accel/memory/memory_hooks.h"

namespace accel::openreg::detail {

class Runtime;

class OpenRegHooks final : public memory::CachingAllocatorHooks<AcceleratorHooks> {
 public:
  explicit OpenRegHooks(DeviceType type);
  ~OpenRegHooks() override;

 protected:
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

  EventId createEventImpl(DeviceIndex index, EventFlags flags) override;
  void destroyEventImpl(EventId event) noexcept override;
  void recordEventImpl(EventId event, Stream stream) override;
  void blockStreamImpl(EventId event, Stream stream) override;
  bool queryEventImpl(EventId event) const override;
  void synchronizeEventImpl(EventId event) const override;
  double elapsedTimeImpl(EventId start, EventId end) const override;

  memory::CachingAllocator& cachingAllocator() const override;
  MemoryStats memoryStatsImpl(DeviceIndex index) const override;
  void resetPeakMemoryStatsImpl(DeviceIndex index) override;
  DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const override;
  void resetAccumulatedMemoryStatsImpl(DeviceIndex index) override;
  void setMemoryFractionImpl(double fraction, DeviceIndex index) override;
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override;

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

 private:
  // A host -> device or device -> host copy through the runtime: refuses a
  // host side in openreg's device range, and waits unless it is pinned.
  void copyWithHost(HookId hook, void* dst, const void* src, std::size_t bytes,
                    Stream stream, const void* host, const char* host_name);
  // The runtime, initialised by initImpl (the hooks base runs it before any
  // *Impl that needs it). Throws DeviceError in a fork child, naming `hook`.
  Runtime& runtime(HookId hook) const;
  // Made by initImpl, once the device count is known. Written before the
  // hooks base publishes "initialised" (release) and read only by *Impls that
  // run after its acquire load, so a plain pointer needs no lock or atomic.
  std::unique_ptr<DefaultGenerators> defaults_;
};

}  // namespace accel::openreg::detail
