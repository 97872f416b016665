// CudaHooks: the cuda backend's implementation of the hooks contract, on the
// CUDA runtime (linked statically) and the driver (opened lazily, driver.h).
//
// Probes (isAvailable, deviceCount, hasPrimaryContext, isPinnedPtr) read the
// driver probe and driver queries that create no context. When the probe
// found no devices, every hook that needs one throws NotAvailable with the
// probe's reason ("no NVIDIA driver: libcuda.so.1 not found ..."), including
// device index errors (there is no valid index to name).
//
// Declared groups: device, streams, events, memory, memory_history (the core
// caching allocator, cuda_memory.h), graphs, copies (copies.cpp) and fill
// (fill.cpp: the core's accel::fillUniform etc. on CUDA). docs/cuda.md maps
// each hook to the runtime/driver calls behind it.
//
// Thread-safety: every function is thread-safe. Lifetime: registered once,
// never destroyed.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "accel/default_generators.h"
#include "accel/hooks.h"
#include "accel/memory/memory_hooks.h"

namespace accel::cuda::detail {

class CudaHooks final : public memory::CachingAllocatorHooks<AcceleratorHooks> {
 public:
  CudaHooks();
  ~CudaHooks() override;

 protected:
  // With no devices, a bad index means "no CUDA here": NotAvailable with the
  // probe's reason instead of "index 0 out of range [0, 0)".
  [[noreturn]] void failBadDeviceIndex(DeviceIndex index, int count,
                                       HookId hook) const override;

  bool isBuiltImpl() const override;
  bool isAvailableImpl() const override;
  int deviceCountImpl() const override;
  DeviceIndex getCurrentDeviceImpl() const override;
  void setCurrentDeviceImpl(DeviceIndex index) override;
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

  // The memory groups: memory::CachingAllocatorHooks forwards to it.
  memory::CachingAllocator& cachingAllocator() const override;
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override;
  // cudaMemGetInfo with the device's context current, its errors raised.
  DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const override;

 private:
  DefaultGenerators& defaultGenerators();

  std::once_flag defaults_once_;
  std::unique_ptr<DefaultGenerators> defaults_;
};

// Throws NotAvailable naming the probe's reason unless the driver found
// devices. Every hook that needs a device calls it first.
void requireAvailable();

}  // namespace accel::cuda::detail
