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
// backend does not override fail with HookNotImplemented (a NotSupported)
// naming backend, hook and the *Impl to override. Names and groups come from
// the hook catalogue (hook_catalogue.h).
//
// Lazy initialisation lives here, once for every backend: init() runs
// initImpl() once per hooks object (concurrent callers wait; a throw leaves
// the object uninitialised so that the next call retries), and every hook
// that is not a probe, outside the low group, calls init() on first use. A
// backend's *Impls may therefore assume that initImpl() succeeded, and a
// backend never initialises itself through the Context. The fast path is one
// acquire load. Probes and the low group (current device) never initialise.
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
//  - whatever initImpl throws, from any hook that initialises while the
//    backend is not initialised yet (the next call retries); InvalidArgument
//    when such a hook is called from the backend's own initImpl;
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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "accel/allocator.h"
#include "accel/capabilities.h"
#include "accel/default_generators.h"
#include "accel/device.h"
#include "accel/device_fill.h"
#include "accel/device_properties.h"
#include "accel/error.h"
#include "accel/event.h"
#include "accel/export.h"
#include "accel/generator.h"
#include "accel/graph.h"
#include "accel/hook_catalogue.h"
#include "accel/memory_stats.h"
#include "accel/stream.h"

namespace accel {

// What a hook throws when the backend declares its group but does not
// override its *Impl: a bug in the backend. Carries the hook, so that the
// conformance suite blames the *Impl that is missing rather than the hook a
// case happened to be about.
class ACCEL_API HookNotImplemented : public NotSupported {
 public:
  HookNotImplemented(HookId hook, std::string message,
                     std::source_location where = std::source_location::current());
  ~HookNotImplemented() override;
  [[nodiscard]] HookId hook() const noexcept { return hook_; }

 private:
  HookId hook_;
};

// The key to AcceleratorHooks' restore entry points. Only DeviceGuard and
// StreamGuard can make one: restoring skips validation and initialisation,
// which is right for a value a guard saved a moment ago and wrong for anyone
// else. A key rather than friendship, so that the guards see exactly two
// functions of AcceleratorHooks and nothing else that is private.
class GuardKey {
 private:
  GuardKey() noexcept = default;
  friend class DeviceGuard;
  friend class StreamGuard;
};

class HooksTable;

namespace memory {
class CachingAllocator;
class PinnedCachingAllocator;
}  // namespace memory

namespace detail {
// Lets only the hooks table reach AcceleratorHooks::forgetServedGenerators,
// in a fork child (see there). A key rather than friendship, like GuardKey.
struct DiscoveryRun;  // discovery.cpp
class ForkKey {
 private:
  ForkKey() noexcept = default;
  friend class accel::HooksTable;
};
// Lets only the hook layers' decorator (src/core/layers/layered_hooks.h)
// answer the copies' cache questions for the backend it wraps: the
// decorator must see the same caches as the backend, or the copies it
// forwards would lose their guarantees. A key rather than friendship.
class LayeredHooks;
class LayerKey {
 private:
  LayerKey() noexcept = default;
  friend class LayeredHooks;
};
}  // namespace detail

class ACCEL_API AcceleratorHooks {
 public:
  AcceleratorHooks(DeviceType type, Capabilities capabilities);
  // For a backend some of whose groups depend on the devices it finds (the
  // OpenCL backend's graphs need cl_khr_command_buffer on every device it
  // uses), which it cannot know when it is constructed (registration must
  // not touch a driver). `capabilities` are declared for good; the groups in
  // `provisional` are settled once, by settleCapabilitiesImpl(), the first
  // time anything asks which groups are declared: supports(), capabilities(),
  // or a call into an optional group. Until then nothing has observed them.
  // A group in both sets is provisional. Never throws.
  AcceleratorHooks(DeviceType type, Capabilities capabilities, Capabilities provisional);
  AcceleratorHooks(const AcceleratorHooks&) = delete;
  AcceleratorHooks& operator=(const AcceleratorHooks&) = delete;
  virtual ~AcceleratorHooks();

  [[nodiscard]] DeviceType deviceType() const noexcept { return type_; }
  // The device type's name ("openreg"); used in every message.
  [[nodiscard]] std::string_view name() const noexcept;
  [[nodiscard]] Capabilities capabilities() const noexcept { return declared(); }
  [[nodiscard]] bool supports(HookGroup group) const noexcept {
    return declared().has(group);
  }

  // ---- low: probes (noexcept; never create a device context) ----
  // isAvailable and deviceCount discover the devices (the driver loads and
  // may start threads). The first discovery of each hooks object runs on a
  // watchdog thread and is waited for at most ACCEL_DISCOVERY_TIMEOUT
  // seconds (docs/lifecycle.md, "Discovery"): past that the probes answer
  // false and 0, and discoveryProblem() says why, until it finishes. From
  // the first discovery on, a fork child refuses the backend like an
  // initialised one.
  [[nodiscard]] bool isBuilt() const noexcept;
  [[nodiscard]] bool isAvailable() const noexcept;
  // Number of devices; 0 on any error.
  [[nodiscard]] int deviceCount() const noexcept;
  // True from the moment the first discovery began. noexcept.
  [[nodiscard]] bool discoveryStarted() const noexcept {
    return discovery_.load(std::memory_order_acquire) != Discovery::NotStarted;
  }
  // Why the probes answer "no devices" without having asked the backend (its
  // first discovery did not finish within the limit, or this is a fork child
  // of a process that had discovered it); empty otherwise. Never blocks;
  // throws only std::bad_alloc.
  [[nodiscard]] std::string discoveryProblem() const;

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
  // Initialises the backend: runs initImpl() once for this object. Callers
  // on other threads wait for a running initImpl() and return once it
  // succeeded. After a throw (which reaches the caller that ran it) the
  // object is not initialised, and the next caller, a waiting one included,
  // runs initImpl() again. Called by every initialising hook
  // on first use (see above) and by Context::lazyInitDevice. Throws what
  // initImpl throws; InvalidArgument when called (directly, or through a
  // hook) from the backend's own initImpl on the same thread, which would
  // otherwise wait for itself. Thread-safe.
  void init() {
    if (init_state_.load(std::memory_order_acquire) != InitState::Done) [[unlikely]]
      initSlow(HookId::init);
  }
  // True once init() succeeded. noexcept; never initialises.
  [[nodiscard]] bool isInitialized() const noexcept {
    return init_state_.load(std::memory_order_acquire) == InitState::Done;
  }
  // True from the moment initImpl() begins (and after it succeeded); false
  // again if it threw. The fork handler poisons every backend for which this
  // is true: its state may be half-built in the child. noexcept.
  [[nodiscard]] bool initializationStarted() const noexcept {
    InitState state = init_state_.load(std::memory_order_acquire);
    return state == InitState::Running || state == InitState::Done;
  }
  // True once device `index` has been initialised; never initialises. noexcept.
  [[nodiscard]] bool hasPrimaryContext(DeviceIndex index) const noexcept;
  // One generator per device, created on first use, the same object after.
  // index -1 = current device. Throws InvalidArgument for a bad index.
  // Lifetime: returns a reference to the generator the backend stores. Default
  // generators live as long as their hooks object, and registered hooks
  // objects are never destroyed, so the reference is valid for the rest of
  // the process (copy it to hold a handle of your own; copies share state).
  // On an initialised backend with an explicit index this is one acquire
  // load, a compare against the count read at init, then either the
  // DefaultGenerators the backend serves from (inline: a range check and one
  // acquire load, no virtual call) or the backend's impl.
  [[nodiscard]] const Generator& getDefaultGenerator(DeviceIndex index = kCurrentDevice) {
    if (init_state_.load(std::memory_order_acquire) == InitState::Done && index >= 0 &&
        index < initialized_device_count_) [[likely]] {
      if (served_generators_ != nullptr) [[likely]]
        return served_generators_->get(index);
      return getDefaultGeneratorImpl(index);
    }
    return getDefaultGeneratorSlow(index);
  }
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
  // Device `index`'s total memory and what is free of it now (memory the
  // caching allocator holds counts as used), as torch.cuda.mem_get_info.
  // Each backend says where its figures come from (docs/hooks.md). A backend
  // that cannot tell throws NotSupported naming itself and the hook.
  [[nodiscard]] DeviceMemoryInfo getMemoryInfo(DeviceIndex index = kCurrentDevice) const;
  // Sets the cumulative figures of memoryStats(index) (each Stat's allocated
  // and freed) and its event counters to 0 (MemoryStats::resetAccumulated).
  void resetAccumulatedMemoryStats(DeviceIndex index = kCurrentDevice);
  // Caps what the allocator of device `index` may reserve at `fraction` of
  // getMemoryInfo(index).total_bytes; an allocation past it raises
  // OutOfMemory (after the cache was freed and the allocation retried). 0
  // refuses every allocation, 1 allows the whole device. Throws
  // InvalidArgument for a fraction outside [0, 1] (NaN included); a backend
  // that does not know its capacity throws NotSupported.
  void setMemoryFraction(double fraction, DeviceIndex index = kCurrentDevice);
  // Statistics of the pinned host memory cache (getPinnedMemoryAllocator):
  // allocated and reserved bytes, allocations, segments, device allocs and
  // frees. NotSupported from a backend without a pinned cache.
  [[nodiscard]] MemoryStats hostMemoryStats() const;
  // For a backend's own asynchronous copies outside the copies hooks
  // (openreg's copyAsync): notes that `stream` uses the block of the core's
  // pinned cache that holds `host`, as the copies hooks do, so that the
  // block, once freed, is reused only after the stream's work at the free
  // completed. False, changing nothing, when no block of this backend's
  // core pinned cache holds `host`. Thread-safe; throws InvalidArgument for
  // a stream that is not this backend's, and what recording the stream
  // throws (std::bad_alloc).
  bool recordPinnedStreamUse(const void* host, Stream stream) const;

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

  // ---- copies group ----
  // Copy `bytes` bytes on `stream`, after the work enqueued on it before, in
  // the direction the name says. Ranges are addresses in the process's one
  // address space (device pointers as the allocators hand them out).
  //
  // Host memory is pageable or this backend's pinned memory (isPinnedPtr).
  // With pinned memory the copy may be asynchronous: the call may return
  // before it ran, so the host bytes must stay valid (and, as a source,
  // unchanged) until the stream passes the copy (synchronizeStream, or an
  // event recorded after it). With pageable memory the call returns once the
  // host side is done with: a source may be reused, a destination holds the
  // data. Device-side completion is always stream-ordered. Another backend's
  // pinned memory is pageable memory here.
  //
  // Guaranteed here, for every backend: a pinned block may be freed as soon
  // as the call returns; it goes to its next owner only once the stream has
  // passed the copy. With pinned memory of the core's cache
  // (corePinnedCache) the copy's stream is recorded on the block, which the
  // cache then holds back (the call stays asynchronous); with pinned memory
  // the core does not know (a backend's own allocator) the call synchronises
  // the stream before it returns.
  //
  // Checked here, for every backend (InvalidArgument naming the hook, the
  // backend, what was wrong and what to do): the stream (type and index);
  // null pointers; a range that wraps the address space; overlapping source
  // and destination ranges (in every direction); a device side that is not
  // this backend's device memory (pinned or pageable host memory, another
  // backend's memory: the message says whose); a device range that does not
  // lie inside one live allocation (freed, or running past its end) when the
  // backend's device memory is the core's cache (coreDeviceCache), else the
  // backend's getDeviceFromPtr of its first and last byte; a host side that
  // is device memory of this backend or of another registered one; a host
  // range in a freed pinned block or past the end of its pinned allocation;
  // a stream on a device the copy does not involve: dst's device for host ->
  // device, src's for device -> host, either for device -> device (src and
  // dst may be on different devices of the backend). A copy of 0 bytes
  // checks the stream and returns: its pointers are not looked at.
  // Left to the backend: what only its driver knows (device memory the
  // core's caches did not hand out, a device range past the end of its own
  // allocator's memory, a copy the device cannot make while capturing).
  void copyHostToDevice(void* dst, const void* src, std::size_t bytes, Stream stream);
  void copyDeviceToHost(void* dst, const void* src, std::size_t bytes, Stream stream);
  void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes, Stream stream);

  // ---- fill (accel/device_fill.h) ----
  // Enqueues on `stream` a random fill of `count` elements of `kind` at
  // `data`, drawn from `generator` (the default generator of the stream's
  // device when it is not defined): bit for bit the host fill of
  // accel/random_fill.h from the same position. a and b are the
  // distribution's parameters (low and high, mean and stddev, p and unused;
  // unused for bits). Checks, as the copies do: the stream is one of this
  // backend's; a and b as the host fill checks them; for count > 0, data is
  // not null and [data, data + count elements) lies inside one live
  // allocation of the stream's device (for memory of the core's caches; the
  // backend checks its own); the generator is of this device type. Throws
  // InvalidArgument for each, NotSupported when the group is not declared,
  // and what the backend throws. A count of 0 checks and returns.
  // Thread-safety: thread-safe.
  void fillRandom(Stream stream, DeviceFill kind, void* data, std::size_t count, double a,
                  double b, Generator generator = {});

  // Throws InvalidArgument unless 0 <= index < deviceCount(). Backends use it
  // for their own entry points so that all range errors read alike.
  void checkDeviceIndex(DeviceIndex index) const;
  // Resolves -1 to the current device, then checks the range.
  [[nodiscard]] DeviceIndex resolveDeviceIndex(DeviceIndex index) const;

  // For DeviceGuard and StreamGuard only (see GuardKey): make `index` /
  // `stream` current again without validating or initialising, because a
  // guard saved them from this backend a moment ago. Never throw: they run
  // in destructors; a failure is reported once on stderr, naming `guard`,
  // and otherwise ignored. restoreCurrentDevice sets only when the current
  // device differs (reading is cheaper than setting on every backend).
  void restoreCurrentDevice(GuardKey, DeviceIndex index, const char* guard) noexcept;
  void restoreCurrentStream(GuardKey, Stream stream, const char* guard) noexcept;

  // For the hooks table only (see ForkKey): in a fork child, single-threaded,
  // for a backend it poisons. getDefaultGenerator goes back to the backend's
  // impl, so that a caller who kept a reference to the real hooks object gets
  // the backend's own fork refusal instead of a generator of a dead device.
  void forgetServedGenerators(detail::ForkKey) noexcept { served_generators_ = nullptr; }
  // For the hooks table only, in a fork child, for a backend that had been
  // discovered or initialised before the fork: from now on this object
  // refuses every hook that would initialise with the "before fork()"
  // DeviceError, and its probes answer false and 0 without reaching the
  // backend, so a reference kept from before the fork is as safe as the
  // stand-in getHooks hands out. Stores only.
  void refuseAfterFork(detail::ForkKey) noexcept;
  // For the hooks table before a fork: the device count the probes last
  // answered (0 if they never did), without asking the backend, whose
  // discovery may be in progress on another thread.
  [[nodiscard]] int lastDeviceCount(detail::ForkKey) const noexcept {
    return last_device_count_.load(std::memory_order_relaxed);
  }
  // The same for the declared groups: provisional ones only if settled (
  // settling may run the backend's discovery).
  [[nodiscard]] Capabilities capabilitiesForFork(detail::ForkKey) const noexcept {
    return capabilities_settled_.load(std::memory_order_acquire) ? capabilities_ : firm_;
  }
  // For the hook layers' decorator only (see LayerKey): this backend's
  // coreDeviceCache() and corePinnedCache(). Never throw.
  [[nodiscard]] memory::CachingAllocator* coreDeviceCache(detail::LayerKey) const {
    return coreDeviceCache();
  }
  [[nodiscard]] memory::PinnedCachingAllocator* corePinnedCache(detail::LayerKey) const {
    return corePinnedCache();
  }

 protected:
  // Raises the error for a device index out of range [0, count) in `hook`.
  // The base class throws InvalidArgument ("device index 5 out of range
  // [0, 2) for 'openreg' (setCurrentDevice); ..."); the stand-ins for an
  // absent or poisoned backend override it with their own explanation.
  // Protected: only the wrappers and subclasses raise refusals.
  [[noreturn]] virtual void failBadDeviceIndex(DeviceIndex index, int count,
                                               HookId hook) const;
  // Raises the error for a hook this object cannot serve. The base class
  // throws NotSupported naming backend, hook and group when the group is not
  // declared, and HookNotImplemented naming the *Impl to override when it is;
  // the stand-ins override it with their own errors.
  [[noreturn]] virtual void failUnsupported(HookId hook) const;

  // For stand-ins that can never initialise (absent or poisoned backends):
  // from now on init() and every hook that would initialise refuse through
  // failUnsupported(that hook) instead of running initImpl. Call from the
  // constructor.
  void refuseInitialization() noexcept {
    init_state_.store(InitState::Refused, std::memory_order_release);
    // Stand-ins answer their probes from fixed values: nothing to discover.
    discovery_.store(Discovery::Done, std::memory_order_release);
  }

  // Makes getDefaultGenerator on an initialised backend answer from
  // `generators` inline, without calling getDefaultGeneratorImpl: for a
  // backend whose impl is `return generators.get(index)` and nothing else
  // (the impl still serves the hook before init completes and for -1).
  // Call from the constructor or initImpl (the pointer is published by
  // init's release store); `generators` must live as long as this object.
  // Not thread-safe otherwise; never throws.
  void serveDefaultGeneratorsFrom(DefaultGenerators& generators) noexcept {
    served_generators_ = &generators;
  }

  // Which of the provisional groups (see the constructor) the backend keeps;
  // called once, from whichever thread first asks. A probe: it must not
  // create a device context, and what it throws counts as keeping none;
  // groups it returns that were not provisional are ignored. It runs inside
  // a std::call_once: it must not ask supports() or capabilities() or call a
  // hook of an optional group (that would wait for itself).
  // Default: all of them.
  virtual Capabilities settleCapabilitiesImpl() const;

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
  // Must return a generator that lives as long as this object (the public
  // hook hands the reference to callers): keep them in a DefaultGenerators.
  virtual const Generator& getDefaultGeneratorImpl(DeviceIndex index);
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
  // The range getNewStream(index, priority) checks `priority` against, asked
  // for the device the stream will be made on (index resolved). Default:
  // streamPriorityRangeImpl(). A backend whose range query needs a device
  // context overrides it to ask device `index`, which the new stream needs
  // anyway, rather than the thread's current device (CUDA: a query on an
  // untouched device 0 would create its context).
  virtual std::pair<int, int> newStreamPriorityRangeImpl(DeviceIndex index) const;

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
  virtual DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const;
  virtual void resetAccumulatedMemoryStatsImpl(DeviceIndex index);
  // fraction is already checked to be in [0, 1].
  virtual void setMemoryFractionImpl(double fraction, DeviceIndex index);
  virtual MemoryStats hostMemoryStatsImpl() const;

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

  // Called with everything the public hook checks already checked and
  // bytes > 0; must honour the pinned/pageable rule above.
  virtual void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                    Stream stream);
  virtual void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                                    Stream stream);
  virtual void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                      Stream stream);

  // Called with everything fillRandom checks already checked, count > 0 and
  // the generator resolved.
  virtual void fillRandomImpl(Stream stream, DeviceFill kind, void* data,
                              std::size_t count, double a, double b,
                              const Generator& generator);

  // The core caches behind this backend's memory, which the copies group's
  // guarantees read (see the copies group above); null (the default) when
  // the backend's device or pinned memory does not come from one. Called
  // only once the backend is initialised, also for another backend's copy
  // (to say whose memory a pointer is); must not throw then, and must return
  // objects that live as long as this one. memory::CachingAllocatorHooks
  // answers both from cachingAllocator() and pinnedCachingAllocator().
  [[nodiscard]] virtual memory::CachingAllocator* coreDeviceCache() const;
  [[nodiscard]] virtual memory::PinnedCachingAllocator* corePinnedCache() const;
  // The pointer questions the copies' checks ask (whose device memory, and
  // whether pinned): getDeviceFromPtrImpl and isPinnedPtr by default. The
  // hook layers' decorator answers them from the backend it wraps without
  // showing them to its layers: they are the core's questions, not calls the
  // program made.
  [[nodiscard]] virtual Device deviceQueryForChecks(const void* ptr) const;
  [[nodiscard]] virtual bool pinnedQueryForChecks(const void* ptr) const noexcept;

 private:
  enum class InitState : std::uint8_t { NotStarted, Running, Done, Refused, Forked };
  // The first discovery (discovery.cpp): Running while its watchdog thread
  // runs the backend's probe; Forked in a fork child that refuses the object.
  enum class Discovery : std::uint8_t { NotStarted, Running, Done, Forked };
  enum class Probe : std::uint8_t { Available, Count };
  // The probes' slow path: the first discovery, bounded; a fork child's answer.
  int discoverSlow(Probe probe) const noexcept;
  int callProbe(Probe probe) const noexcept;
  // For initialising hooks: runs the first discovery (bounded) and throws
  // NotAvailable when it did not finish in time; initImpl would wait for it
  // without bound.
  void requireDiscovered(HookId hook) const;
  // For settling the provisional groups: runs the first discovery (bounded)
  // unless this thread is running it; true when the backend may be asked.
  bool discoverForSettling() const noexcept;

  // The fast check of every initialising hook: one acquire load.
  // Const hooks initialise too: the init state is a cache of the object's
  // readiness, not part of its observable value.
  void requireInit(HookId hook) const {
    if (init_state_.load(std::memory_order_acquire) != InitState::Done) [[unlikely]]
      initSlow(hook);
  }
  void initSlow(HookId hook) const;
  // getDefaultGenerator before init, for -1, or for a bad index.
  const Generator& getDefaultGeneratorSlow(DeviceIndex index);
  // The device count range checks use: read once when init() succeeds
  // (devices do not come and go within a process), so that an initialised
  // backend's index checks cost a load instead of a virtual call. A count of
  // 0 then is not trusted (the probe may have failed): it is asked again.
  [[nodiscard]] int rangeCount() const noexcept {
    if (init_state_.load(std::memory_order_acquire) == InitState::Done &&
        initialized_device_count_ > 0) [[likely]]
      return initialized_device_count_;
    return deviceCount();
  }

  void requireGroup(HookId hook) const {
    if (!declared().has(hookInfo(hook).group)) [[unlikely]]
      raiseUnsupported(hook);
  }
  // The declared groups, provisional ones settled (one acquire load once
  // they are).
  [[nodiscard]] Capabilities declared() const noexcept {
    if (!capabilities_settled_.load(std::memory_order_acquire)) [[unlikely]]
      return settleCapabilities();
    return capabilities_;
  }
  Capabilities settleCapabilities() const noexcept;
  // failUnsupported / failBadDeviceIndex, known to the compiler not to return
  // (a virtual [[noreturn]] is not trusted through the vtable).
  [[noreturn]] void raiseUnsupported(HookId hook) const;
  [[noreturn]] void raiseBadDeviceIndex(DeviceIndex index, int count, HookId hook) const;
  void checkIndex(DeviceIndex index, HookId hook) const;
  DeviceIndex resolveIndex(DeviceIndex index, HookId hook) const;
  void checkStream(Stream stream, HookId hook) const;
  // The copies group's checks and guarantees (copies.cpp). checkCopy says
  // what the copy's host side is; NoCopy for a copy of 0 bytes.
  enum class CopySide : std::uint8_t { Host, Device };
  enum class HostSide : std::uint8_t {
    NoCopy,         // 0 bytes: nothing to do
    NoHost,         // device to device
    Pageable,       // done with when the backend's *Impl returns
    CorePinned,     // a block of corePinnedCache(): the stream is recorded on it
    BackendPinned,  // pinned memory the core does not know: the stream is waited for
  };
  [[nodiscard]] HostSide checkCopy(HookId hook, void* dst, CopySide dst_side,
                                   const void* src, CopySide src_side, std::size_t bytes,
                                   Stream stream) const;
  [[nodiscard]] Device deviceOfCopyRange(HookId hook, const char* which, const void* ptr,
                                         std::size_t bytes) const;
  [[nodiscard]] HostSide hostSideOf(HookId hook, const char* which, const void* ptr,
                                    std::size_t bytes) const;
  // Around the backend's *Impl: keeps pinned host memory from its next owner
  // until `stream` has passed the copy.
  void holdHostSide(HostSide side, const void* host, Stream stream) const;
  void finishCopy(HostSide side, Stream stream) const;
  // Whose memory `ptr` is among the other initialised backends of the
  // process's hooks table, said for a message ("device memory of 'openreg'
  // (openreg:0)"); with `device_only`, pinned memory does not count. Empty
  // when none claims it. Never throws.
  [[nodiscard]] std::string ownerElsewhere(const void* ptr,
                                           bool device_only) const noexcept;

  DeviceType type_;
  // Written once, by settleCapabilities, before capabilities_settled_ is set.
  mutable Capabilities capabilities_;
  Capabilities provisional_;
  Capabilities firm_;  // declared for good (not provisional): immutable
  mutable std::atomic<bool> capabilities_settled_{true};
  mutable std::once_flag settle_once_;
  mutable std::atomic<InitState> init_state_{InitState::NotStarted};
  // Written before init_state_ becomes Done, read after seeing Done.
  mutable int initialized_device_count_ = 0;
  // Set by serveDefaultGeneratorsFrom before init_state_ becomes Done.
  DefaultGenerators* served_generators_ = nullptr;
  mutable std::atomic<std::thread::id> init_thread_{};  // runs initImpl: re-entry check
  mutable std::mutex init_mutex_;                       // held while initImpl runs
  mutable std::atomic<Discovery> discovery_{Discovery::NotStarted};
  mutable std::atomic<int> last_device_count_{0};  // for a fork's stand-in
  // The first discovery's watchdog run, shared with its thread (which may
  // outlive the wait); guarded by discovery_mutex_.
  mutable std::shared_ptr<detail::DiscoveryRun> discovery_run_;
  mutable std::mutex discovery_mutex_;
};

}  // namespace accel
