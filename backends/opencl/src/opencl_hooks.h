// OpenClHooks: the opencl backend's implementation of the hooks contract, on
// the OpenCL ICD loader (opened lazily, loader.h).
//
// Probes (isAvailable, deviceCount, hasPrimaryContext, isPinnedPtr) read the
// discovery (devices.h), which creates no context. Without devices every
// hook that needs one throws NotAvailable with the reason ("no OpenCL
// loader: ..."), including device index errors; init() succeeds then, except
// when ACCEL_OPENCL_DEVICES is malformed, which init() reports.
//
// Declared groups: device, streams, events, memory, memory_history (the
// core caching allocator over SVM, opencl_memory.h) and copies (copies.cpp);
// graphs (graphs.h) provisionally: kept when every device the backend uses
// has a cl_khr_command_buffer it can use (command_buffers.h), settled on the
// first question, which discovers the devices but creates no context. The
// current device and streams are per thread (kit::ThreadCurrent).
//
// Thread-safety: every function is thread-safe. Lifetime: registered once,
// never destroyed.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "accel/default_generators.h"
#include "accel/hooks.h"
#include "accel/kit/thread_current.h"
#include "accel/memory/memory_hooks.h"

namespace accel::opencl::detail {

class OpenClHooks final : public memory::CachingAllocatorHooks<AcceleratorHooks> {
 public:
  explicit OpenClHooks(DeviceType type);
  ~OpenClHooks() override;

  // The calling thread's current stream on device `index`, an index already
  // checked: getCurrentStream without the hooks' checks, for the device
  // allocator, which asks on every allocation (the checks and the virtual
  // call were half of the cost its pair added to the core's). Never throws.
  [[nodiscard]] Stream currentStream(DeviceIndex index) const noexcept {
    return Stream(Device::unchecked(deviceType(), index), current_.stream(index));
  }
  // The per-thread current device and streams, read by the device
  // allocators (kit::CachingDeviceAllocator) on every allocation.
  [[nodiscard]] const kit::ThreadCurrent& threadCurrent() const noexcept {
    return current_;
  }

 protected:
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

  EventId createEventImpl(DeviceIndex index, EventFlags flags) override;
  void destroyEventImpl(EventId event) noexcept override;
  void recordEventImpl(EventId event, Stream stream) override;
  void blockStreamImpl(EventId event, Stream stream) override;
  bool queryEventImpl(EventId event) const override;
  void synchronizeEventImpl(EventId event) const override;
  double elapsedTimeImpl(EventId start, EventId end) const override;

  // The copies group (copies.cpp).
  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream stream) override;

  // The graphs group (graphs.cpp).
  Capabilities settleCapabilitiesImpl() const override;
  GraphId graphCreateImpl(bool keep_graph) override;
  void graphDestroyImpl(GraphId graph) override;
  void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) override;
  void graphCaptureEndImpl(GraphId graph) override;
  void graphInstantiateImpl(GraphId graph) override;
  void graphReplayImpl(GraphId graph) override;
  void graphResetImpl(GraphId graph) override;
  MempoolId graphPoolImpl(GraphId graph) const override;

  memory::CachingAllocator& cachingAllocator() const override;
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override;

 private:
  DefaultGenerators& defaultGenerators();

  kit::ThreadCurrent current_;
  std::once_flag defaults_once_;
  std::unique_ptr<DefaultGenerators> defaults_;
};

}  // namespace accel::opencl::detail
