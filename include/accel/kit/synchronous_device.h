// SynchronousDeviceHooks: a hooks base for a device that finishes work before
// the call that enqueues it returns.
//
// Many devices (a simulator, a CPU-backed test double, a device whose driver
// calls block) have streams and events only in name: work is done when the
// call returns, so a stream is always idle and a recorded event has always
// completed. Subclass this instead of AcceleratorHooks and the backend gets,
// without writing them:
//
//  - low:     deviceCount (fixed at construction), isBuilt (true), isAvailable
//             (a device exists), the per-thread current device (ThreadCurrent);
//  - high:    hasPrimaryContext (true once a device was used: markDeviceUsed),
//             default and new generators (Philox), getDeviceFromPtr and
//             isPinnedPtr from the AddressMap its allocators fill;
//  - device:  deviceSynchronize (validates, then returns: nothing is pending);
//  - streams: default stream 0, getNewStream handing out fresh ids, the
//             per-thread current stream per device, query (true) and
//             synchronize (returns) that reject ids this object never issued,
//             priority range {0, 0};
//  - events:  create/destroy/record/block/query/synchronize/elapsedTime with
//             the checks a real device makes (unknown or destroyed events,
//             recording on another device's stream, elapsedTime without
//             enable_timing or before both events were recorded);
//  - copies:  for a device whose memory the host can address (a simulator
//             over host memory, an integrated device), the three copies as
//             std::memcpy, done when the call returns; a host side that is
//             device memory of the AddressMap, or a device range that runs
//             past the end of the range the map holds it in, is refused.
//             Declare HookGroup::Copies only if the host can address the
//             device's memory: these copies dereference it.
//  - fill:    likewise, the core's host fill written into the device's
//             memory (declare HookGroup::Fill only if the host can address
//             it), its draw reserved from the generator when it runs.
//
// The subclass writes init (default: nothing to start), its allocators,
// showConfig and getDeviceProperties (if it declares the device group), and
// overrides anything above it does differently:
//
//   class MyHooks final : public accel::kit::SynchronousDeviceHooks {
//    public:
//     explicit MyHooks(DeviceType t)
//         : SynchronousDeviceHooks(t, Capabilities{HookGroup::Device}, 2) {}
//    protected:
//     Allocator& getDeviceAllocatorImpl(DeviceIndex i) override { ... }
//     ...
//   };
//
// The streams and events groups are always declared (they are implemented
// here); pass the other groups the subclass implements (copies included:
// implemented here, declared by the subclass).
//
// Call tracing: every hook implemented here starts with enter(HookId). While
// the subclass has switched tracing on (setTracing(true)), enter calls the
// virtual onHookCall(id), which may record the call or throw to inject a
// failure (a test double does both); switched off, enter is one relaxed load.
// A subclass calls enter() at the start of its own hooks to be traced alike.
//
// Thread-safety: every hook is thread-safe. Stream ids are handed out with an
// atomic counter; events live in a table behind a mutex.
// Lifetime: like every hooks object, a registered one is never destroyed.
#pragma once

#include <atomic>
#include <memory>
#include <string_view>
#include <utility>

#include "accel/default_generators.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks.h"
#include "accel/kit/address_map.h"
#include "accel/kit/thread_current.h"

namespace accel::kit {

class ACCEL_API SynchronousDeviceHooks : public AcceleratorHooks {
 public:
  // Throws InvalidArgument if device_count is outside [0, kMaxDevicesPerType]
  // or ThreadCurrent's limit of live objects is reached.
  SynchronousDeviceHooks(DeviceType type, Capabilities capabilities, int device_count);
  ~SynchronousDeviceHooks() override;

 protected:
  // ---- for the subclass ----
  [[nodiscard]] ThreadCurrent& current() const noexcept { return current_; }
  // The allocators record their memory here; getDeviceFromPtr and
  // isPinnedPtr read it.
  [[nodiscard]] AddressMap& addresses() const noexcept { return addresses_; }
  // Marks device `index` initialised (hasPrimaryContext). Never throws.
  void markDeviceUsed(DeviceIndex index) noexcept;
  // Throws InvalidArgument unless `stream` is the default stream of its
  // device or was returned by getNewStream. `what` is the calling hook.
  void requireKnownStream(Stream stream, HookId what) const;
  // The kit's checks of a copy by `hook` (copyHostToDevice, copyDeviceToHost
  // or copyDeviceToDevice): a known stream, each side the memory the hook
  // expects, a device range within its allocation (see the copies above).
  // Throws InvalidArgument naming the hook. For a subclass that makes the
  // copy another way (a graph records it: SynchronousCachingHooks).
  void checkCopy(HookId hook, void* dst, const void* src, std::size_t bytes,
                 Stream stream) const;

  // Call tracing (see the top of this header). enter() throws what
  // onHookCall throws; the default onHookCall does nothing.
  void enter(HookId hook) const {
    if (tracing_.load(std::memory_order_relaxed)) [[unlikely]]
      onHookCall(hook);
  }
  void setTracing(bool on) noexcept { tracing_.store(on, std::memory_order_relaxed); }
  [[nodiscard]] bool tracing() const noexcept {
    return tracing_.load(std::memory_order_relaxed);
  }
  virtual void onHookCall(HookId hook) const;

  // ---- provided hooks (override to change) ----
  bool isBuiltImpl() const override;
  bool isAvailableImpl() const override;
  int deviceCountImpl() const override;
  DeviceIndex getCurrentDeviceImpl() const override;
  void setCurrentDeviceImpl(DeviceIndex index) override;
  DeviceIndex exchangeDeviceImpl(DeviceIndex index) override;

  void initImpl() override;
  bool hasPrimaryContextImpl(DeviceIndex index) const override;
  // Served inline from the kit's DefaultGenerators once initialised (see
  // AcceleratorHooks::serveDefaultGeneratorsFrom): an override here is called
  // only before init and for index -1.
  const Generator& getDefaultGeneratorImpl(DeviceIndex index) override;
  Generator getNewGeneratorImpl(DeviceIndex index) override;
  Device getDeviceFromPtrImpl(const void* ptr) const override;
  bool isPinnedPtrImpl(const void* ptr) const override;

  void deviceSynchronizeImpl(DeviceIndex index) override;

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

  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream stream) override;

  void fillRandomImpl(Stream stream, DeviceFill kind, void* data, std::size_t count,
                      double a, double b, const Generator& generator) override;
  // The fill itself: reserves the draw from `generator` and writes it into
  // host-addressable `data`. Thread-safe.
  static void fillHostAddressable(DeviceFill kind, void* data, std::size_t count,
                                  double a, double b, const Generator& generator);

 private:
  // The kit's own checks of a copy (see the top of this header).
  void checkHostSide(HookId hook, const char* which, const void* ptr) const;
  void checkDeviceSide(HookId hook, const char* which, const void* ptr,
                       std::size_t bytes) const;

  struct Events;

  const int device_count_;
  std::atomic<bool> tracing_{false};
  mutable ThreadCurrent current_;
  mutable AddressMap addresses_;
  DefaultGenerators default_generators_;
  // Per device: initialised yet, and the next id getNewStream hands out.
  std::unique_ptr<std::atomic<bool>[]> used_;
  std::unique_ptr<std::atomic<StreamId>[]> next_stream_;
  std::unique_ptr<Events> events_;
};

}  // namespace accel::kit
