// AcceleratorHooks: the one interface a backend implements.
//
// A backend subclasses AcceleratorHooks, overrides the *Impl functions of the
// groups it declares in its Capabilities, and registers an instance with
// registerHooks() (hooks_table.h). Programs reach it with getHooks(type).
//
// The public functions are non-virtual and carry the contract (docs/hooks.md):
// they validate device indices and streams, make probes noexcept (a probe
// whose implementation throws answers its benign default), and refuse calls
// into undeclared groups with NotSupported naming the backend and the group.
// Backends therefore implement only the device-specific part, and every
// backend behaves the same at the edges. The protected *Impl functions that a
// backend does not override fail with NotSupported naming backend and hook.
//
// Errors, for every public function below unless its comment says otherwise:
//  - NotSupported (naming backend, hook and group) for a group the backend
//    did not declare, or a hook it declares but did not implement;
//  - InvalidArgument for a device index outside [0, deviceCount()) (-1 is
//    resolved to the current device first where the parameter allows it),
//    or a stream of another device type;
//  - NotAvailable from the absent hooks (no backend registered), naming the
//    hook and how to load a backend; DeviceError in a fork child for a
//    backend initialised before the fork;
//  - whatever the backend raises: OutOfMemory, DeviceError (device lost,
//    misuse the device rejects), InvalidArgument (unknown ids, foreign
//    pointers).
// Probes are noexcept and never throw.
//
// Thread-safety: every public function may be called from any thread at any
// time; implementations must make that true. "Current device" and "current
// stream" are per thread (and the current stream per device).
//
// Lifetime: a registered hooks object is never destroyed (see
// docs/lifecycle.md): code running during static destruction may reach it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "accel/allocator.h"
#include "accel/capabilities.h"
#include "accel/device.h"
#include "accel/device_properties.h"
#include "accel/event.h"
#include "accel/export.h"
#include "accel/generator.h"
#include "accel/graph.h"
#include "accel/memory_stats.h"
#include "accel/stream.h"

namespace accel {

class ACCEL_API AcceleratorHooks {
 public:
  AcceleratorHooks(DeviceType type, Capabilities capabilities);
  AcceleratorHooks(const AcceleratorHooks&) = delete;
  AcceleratorHooks& operator=(const AcceleratorHooks&) = delete;
  virtual ~AcceleratorHooks();

  [[nodiscard]] DeviceType deviceType() const noexcept { return type_; }
  // The device type's name ("openreg"); used in every message.
  [[nodiscard]] std::string_view name() const noexcept;
  [[nodiscard]] Capabilities capabilities() const noexcept { return capabilities_; }
  [[nodiscard]] bool supports(HookGroup group) const noexcept {
    return capabilities_.has(group);
  }

  // ---- low: probes (noexcept; never create a device context) ----
  [[nodiscard]] bool isBuilt() const noexcept;
  [[nodiscard]] bool isAvailable() const noexcept;
  // Number of devices; 0 on any error.
  [[nodiscard]] int deviceCount() const noexcept;

  // ---- low: current device, per thread ----
  // The calling thread's current device; 0 until set. Throws as the backend does.
  [[nodiscard]] DeviceIndex getCurrentDevice() const { return getCurrentDeviceImpl(); }
  // Throws InvalidArgument: "device index 5 out of range [0, 2) for 'openreg'".
  void setCurrentDevice(DeviceIndex index);
  // Sets `index` current and returns the previous device. Same errors as set.
  DeviceIndex exchangeDevice(DeviceIndex index);
  // Like exchangeDevice, but -1 or an out-of-range index changes nothing and
  // returns the current device. With no devices at all there is no current
  // device: throws (NotAvailable from the absent hooks, else InvalidArgument).
  DeviceIndex maybeExchangeDevice(DeviceIndex index);

  // ---- high ----
  // Initialises the backend. Reached through Context::lazyInitDevice, which
  // makes it run once per process (retried if it threw). Backends make it
  // idempotent all the same.
  void init();
  // True once device `index` has been initialised; never initialises. noexcept.
  [[nodiscard]] bool hasPrimaryContext(DeviceIndex index) const noexcept;
  // One generator per device, created on first use, the same object after.
  // index -1 = current device. Throws InvalidArgument for a bad index.
  [[nodiscard]] Generator getDefaultGenerator(DeviceIndex index = kCurrentDevice);
  // A generator with independent state on that device.
  [[nodiscard]] Generator getNewGenerator(DeviceIndex index = kCurrentDevice);
  // The device that `ptr` (or an interior pointer) belongs to. Throws
  // InvalidArgument for memory that is not this backend's.
  [[nodiscard]] Device getDeviceFromPtr(const void* ptr) const;
  // Process-lifetime allocator of page-locked host memory.
  [[nodiscard]] Allocator& getPinnedMemoryAllocator();
  // True if ptr (interior pointers count) is this backend's pinned memory.
  [[nodiscard]] bool isPinnedPtr(const void* ptr) const noexcept;
  // Process-lifetime allocator of memory on device `index` (-1 = current).
  [[nodiscard]] Allocator& getDeviceAllocator(DeviceIndex index = kCurrentDevice);

  // ---- device group ----
  void deviceSynchronize(DeviceIndex index = kCurrentDevice);
  [[nodiscard]] std::string showConfig() const;
  [[nodiscard]] DeviceProperties getDeviceProperties(
      DeviceIndex index = kCurrentDevice) const;

  // ---- streams group ----
  // Streams must be of this backend's type and a valid device index.
  [[nodiscard]] Stream getCurrentStream(DeviceIndex index = kCurrentDevice) const;
  [[nodiscard]] Stream getDefaultStream(DeviceIndex index = kCurrentDevice) const;
  // A stream from the backend's pool; priority within streamPriorityRange().
  [[nodiscard]] Stream getNewStream(DeviceIndex index = kCurrentDevice, int priority = 0);
  // Makes `stream` current for its device on this thread.
  void setCurrentStream(Stream stream);
  // Sets `stream` current for its device and returns the previous one.
  Stream exchangeStream(Stream stream);
  // True when all work enqueued on `stream` has finished.
  [[nodiscard]] bool queryStream(Stream stream) const;
  void synchronizeStream(Stream stream) const;
  // {lowest, greatest}: greater numbers run first; 0 is the default priority.
  [[nodiscard]] std::pair<int, int> streamPriorityRange() const;

  // ---- events group ----
  [[nodiscard]] EventId createEvent(DeviceIndex index = kCurrentDevice,
                                    EventFlags flags = {});
  // Frees the event; kNoEvent and unknown ids are ignored. Never throws.
  void destroyEvent(EventId event) noexcept;
  void recordEvent(EventId event, Stream stream);
  // Work enqueued on `stream` after this call waits for the event.
  void blockStream(EventId event, Stream stream);
  [[nodiscard]] bool queryEvent(EventId event) const;
  void synchronizeEvent(EventId event) const;
  // Milliseconds between two completed events created with enable_timing.
  [[nodiscard]] double elapsedTime(EventId start, EventId end) const;

  // ---- memory group ----
  [[nodiscard]] MemoryStats memoryStats(DeviceIndex index = kCurrentDevice) const;
  void resetPeakMemoryStats(DeviceIndex index = kCurrentDevice);
  // Returns cached, unused device memory to the device.
  void emptyCache();

  // ---- memory_history group ----
  void recordMemoryHistory(const MemoryHistoryOptions& options);
  [[nodiscard]] MemorySnapshot memorySnapshot(
      const MemorySnapshotOptions& options = {}) const;
  void attachOutOfMemoryObserver(OutOfMemoryObserver observer);

  // ---- graphs group ----
  [[nodiscard]] GraphId graphCreate(bool keep_graph = false);
  void graphDestroy(GraphId graph);
  // Begins capturing the current stream of the current device.
  void graphCaptureBegin(GraphId graph, MempoolId pool = {},
                         CaptureMode mode = CaptureMode::Global);
  void graphCaptureEnd(GraphId graph);
  void graphInstantiate(GraphId graph);
  void graphReplay(GraphId graph);
  void graphReset(GraphId graph);
  [[nodiscard]] MempoolId graphPool(GraphId graph) const;

  // Throws InvalidArgument unless 0 <= index < deviceCount(). Backends use it
  // for their own entry points so that all range errors read alike.
  void checkDeviceIndex(DeviceIndex index) const;
  // Resolves -1 to the current device, then checks the range.
  [[nodiscard]] DeviceIndex resolveDeviceIndex(DeviceIndex index) const;

  // Raises the error for a device index that is out of range for `hook`.
  // The base class throws InvalidArgument ("device index 5 out of range
  // [0, 2) for 'openreg'"); the absent backend overrides it to say that no
  // backend is registered, naming the hook.
  [[noreturn]] virtual void failBadDeviceIndex(DeviceIndex index, int count,
                                               std::string_view hook,
                                               HookGroup group) const;

  // Raises the error for a hook this object cannot serve. The base class throws
  // NotSupported naming backend, hook and group; the absent backend and the
  // poisoned-after-fork wrapper override it with their own errors.
  [[noreturn]] virtual void failUnsupported(std::string_view hook, HookGroup group) const;

 protected:
  // ---- what a backend overrides (defaults: failUnsupported) ----
  virtual bool isBuiltImpl() const;
  virtual bool isAvailableImpl() const;
  virtual int deviceCountImpl() const;
  virtual DeviceIndex getCurrentDeviceImpl() const;
  // index is already validated.
  virtual void setCurrentDeviceImpl(DeviceIndex index);
  // Default: get, then set if different.
  virtual DeviceIndex exchangeDeviceImpl(DeviceIndex index);
  virtual void initImpl();
  virtual bool hasPrimaryContextImpl(DeviceIndex index) const;
  virtual Generator getDefaultGeneratorImpl(DeviceIndex index);
  virtual Generator getNewGeneratorImpl(DeviceIndex index);
  virtual Device getDeviceFromPtrImpl(const void* ptr) const;
  virtual Allocator& getPinnedMemoryAllocatorImpl();
  virtual bool isPinnedPtrImpl(const void* ptr) const;
  virtual Allocator& getDeviceAllocatorImpl(DeviceIndex index);

  virtual void deviceSynchronizeImpl(DeviceIndex index);
  virtual std::string showConfigImpl() const;
  virtual DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const;

  virtual Stream getCurrentStreamImpl(DeviceIndex index) const;
  virtual Stream getDefaultStreamImpl(DeviceIndex index) const;
  virtual Stream getNewStreamImpl(DeviceIndex index, int priority);
  virtual void setCurrentStreamImpl(Stream stream);
  // Default: get current, then set.
  virtual Stream exchangeStreamImpl(Stream stream);
  virtual bool queryStreamImpl(Stream stream) const;
  virtual void synchronizeStreamImpl(Stream stream) const;
  virtual std::pair<int, int> streamPriorityRangeImpl() const;

  virtual EventId createEventImpl(DeviceIndex index, EventFlags flags);
  virtual void destroyEventImpl(EventId event) noexcept;
  virtual void recordEventImpl(EventId event, Stream stream);
  virtual void blockStreamImpl(EventId event, Stream stream);
  virtual bool queryEventImpl(EventId event) const;
  virtual void synchronizeEventImpl(EventId event) const;
  virtual double elapsedTimeImpl(EventId start, EventId end) const;

  virtual MemoryStats memoryStatsImpl(DeviceIndex index) const;
  virtual void resetPeakMemoryStatsImpl(DeviceIndex index);
  virtual void emptyCacheImpl();

  virtual void recordMemoryHistoryImpl(const MemoryHistoryOptions& options);
  virtual MemorySnapshot memorySnapshotImpl(const MemorySnapshotOptions& options) const;
  virtual void attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer);

  virtual GraphId graphCreateImpl(bool keep_graph);
  virtual void graphDestroyImpl(GraphId graph);
  virtual void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode);
  virtual void graphCaptureEndImpl(GraphId graph);
  virtual void graphInstantiateImpl(GraphId graph);
  virtual void graphReplayImpl(GraphId graph);
  virtual void graphResetImpl(GraphId graph);
  virtual MempoolId graphPoolImpl(GraphId graph) const;

 private:
  // Guards restore the previous device/stream without re-validating it: it
  // was valid when it was saved, and destructors must stay cheap and quiet.
  friend class DeviceGuard;
  friend class StreamGuard;

  void requireGroup(HookGroup group, std::string_view hook) const;
  // failUnsupported, known to the compiler not to return (a virtual
  // [[noreturn]] is not trusted through the vtable).
  [[noreturn]] void raiseUnsupported(std::string_view hook, HookGroup group) const;
  void checkIndex(DeviceIndex index, std::string_view hook, HookGroup group) const;
  DeviceIndex resolveIndex(DeviceIndex index, std::string_view hook,
                           HookGroup group) const;
  void checkStream(Stream stream, std::string_view hook) const;

  DeviceType type_;
  Capabilities capabilities_;
};

}  // namespace accel
