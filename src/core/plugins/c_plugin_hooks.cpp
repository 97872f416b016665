// The hooks of a backend registered through the C plugin boundary: each
// *Impl a call of the plugin's table, and what the boundary does not carry
// answered by the core (c_plugin_hooks.h).
#include "plugins/c_plugin_hooks.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "accel/default_generators.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/kit/synchronous_caching_hooks.h"
#include "accel/kit/thread_current.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/memory_hooks.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "accel/memory/size_rules.h"
#include "accel/philox_generator.h"
#include "accel/plugin_status.h"
#include "layers/layer_registry.h"
#include "layers/layer_settings.h"
#include "layers/table_layer.h"
#include "plugins/c_plugin_link.h"
#include "plugins/c_plugin_tables.h"
#include "plugins/c_table_layer.h"

namespace accel::detail {
namespace {

class CPluginHooks;

// The hook each plugin function serves (its name as CPluginHooks reports
// it), for a function that answers ACCEL_ERROR_NOT_IMPLEMENTED.
struct FunctionHook {
  std::string_view function;
  HookId hook;
};
constexpr FunctionHook kFunctionHooks[] = {
    {"low.get_current_device", HookId::getCurrentDevice},
    {"low.set_current_device", HookId::setCurrentDevice},
    {"high.init", HookId::init},
    {"device.synchronize", HookId::deviceSynchronize},
    {"streams.get_current", HookId::getCurrentStream},
    {"streams.get_default", HookId::getDefaultStream},
    {"streams.create", HookId::getNewStream},
    {"streams.set_current", HookId::setCurrentStream},
    {"streams.query", HookId::queryStream},
    {"streams.synchronize", HookId::synchronizeStream},
    {"streams.priority_range", HookId::streamPriorityRange},
    {"events.create", HookId::createEvent},
    {"events.record", HookId::recordEvent},
    {"events.block", HookId::blockStream},
    {"events.query", HookId::queryEvent},
    {"events.synchronize", HookId::synchronizeEvent},
    {"events.elapsed_ms", HookId::elapsedTime},
    {"graphs.create", HookId::graphCreate},
    {"graphs.destroy", HookId::graphDestroy},
    {"graphs.capture_begin", HookId::graphCaptureBegin},
    {"graphs.capture_end", HookId::graphCaptureEnd},
    {"graphs.instantiate", HookId::graphInstantiate},
    {"graphs.prepare_replay", HookId::graphReplay},
    {"graphs.replay", HookId::graphReplay},
    {"graphs.reset", HookId::graphReset},
    {"copies.host_to_device", HookId::copyHostToDevice},
    {"copies.device_to_host", HookId::copyDeviceToHost},
    {"copies.device_to_device", HookId::copyDeviceToDevice},
    {"fill.fill", HookId::fillRandom},
};

// The groups a minor version added, with that version: a plugin speaking an
// older one cannot declare them. A new group appends its row.
struct GroupSince {
  HookGroup group;
  std::uint32_t version;
};
constexpr GroupSince kGroupsSince[] = {
    {HookGroup::Fill, ACCEL_PLUGIN_ABI_VERSION(1, 3)},
};

// A hook of a group that came after the version the plugin speaks:
// NotSupported naming the backend, the hook and both versions. Returns for
// any other hook.
void refuseGroupAfterVersion(const CPluginTables& t, std::string_view backend,
                             HookId hook) {
  const HookInfo& info = hookInfo(hook);
  for (const GroupSince& added : kGroupsSince) {
    if (info.group != added.group || t.version >= added.version) continue;
    throw NotSupported(concat("'", backend, "' does not support ", info.name,
                              "(): its plugin '", t.plugin, "' speaks plugin API ",
                              abiVersionText(t.version), ", and the '",
                              hookGroupName(info.group), "' group came in plugin API ",
                              abiVersionText(added.version)));
  }
}

std::optional<HookId> hookOfFunction(std::string_view function) noexcept {
  for (const FunctionHook& entry : kFunctionHooks) {
    if (entry.function == function) return entry.hook;
  }
  return std::nullopt;
}

// What the services ask of either kind of C backend hooks.
class CBackendAccess {
 public:
  [[nodiscard]] virtual CDeviceBlock findBlock(const void* ptr) const = 0;
  virtual void divertAllocations(DeviceIndex index, bool on) = 0;
  [[nodiscard]] virtual const CoreCaches& caches() const noexcept = 0;
  // What the current_device and current_stream services answer.
  [[nodiscard]] virtual DeviceIndex coreCurrentDevice() const = 0;
  [[nodiscard]] virtual StreamId coreCurrentStream(DeviceIndex index) const = 0;
  virtual void joinCapture(accel_stream capturing, accel_stream joined) = 0;

 protected:
  ~CBackendAccess() = default;
};

// getDeviceAllocator(i) of a plugin that keeps its current streams itself:
// the core cache on the stream the plugin names. (Where the core keeps them,
// the kit's CachingDeviceAllocator serves instead: no plugin call, no
// checks on the fast path.)
class CDeviceAllocator final : public Allocator {
 public:
  CDeviceAllocator(CPluginHooks& hooks, memory::CachingAllocator& cache,
                   DeviceIndex index)
      : hooks_(hooks), cache_(cache), device_(cache.deviceType(), index) {}
  [[nodiscard]] DataPtr allocate(std::size_t bytes) override;
  [[nodiscard]] Device device() const noexcept override { return device_; }

 private:
  CPluginHooks& hooks_;
  memory::CachingAllocator& cache_;
  Device device_;
};

class CPluginHooks final : public memory::CachingAllocatorHooks<AcceleratorHooks>,
                           public CBackendAccess {
 public:
  explicit CPluginHooks(CPluginTables tables)
      : CachingAllocatorHooks(tables.type, tables.groups),
        t_(std::move(tables)),
        caches_(t_) {}

  // The stream an allocation on device `index` is for.
  [[nodiscard]] Stream allocationStream(DeviceIndex index) const {
    StreamId id = current_.stream(index);
    if (t_.ownsCurrentStream() && t_.groups.has(HookGroup::Streams))
      check(t_.streams.get_current(t_.ctx, index, &id), "streams.get_current");
    return Stream(Device(deviceType(), index), id);
  }
  void markUsed(DeviceIndex index) noexcept {
    std::atomic<bool>& used = used_[static_cast<std::size_t>(index)];
    if (!used.load(std::memory_order_relaxed))
      used.store(true, std::memory_order_relaxed);
  }
  [[nodiscard]] CDeviceBlock findBlock(const void* ptr) const override {
    return caches_.findBlock(name(), ptr);
  }
  void divertAllocations(DeviceIndex index, bool on) override {
    ACCEL_CHECK(t_.device_memory.check_allocation != nullptr, InvalidArgument,
                "divert_allocations: the plugin '", t_.plugin, "' gave '", name(),
                "' no device_memory.check_allocation to divert allocations to");
    ACCEL_CHECK(index >= 0 && static_cast<std::size_t>(index) < diverted_.size(),
                InvalidArgument, "divert_allocations: ", int(index),
                " is not a device index of '", name(), "'");
    diverted_[static_cast<std::size_t>(index)].store(on, std::memory_order_relaxed);
    refreshDiversion(index);
  }
  // A kit allocator takes its slow path (Detour below) while its device is
  // unused (to mark it used) or the plugin diverts it. Under a mutex: the
  // plugin's changes and a first allocation's may race.
  void refreshDiversion(DeviceIndex index) {
    std::lock_guard<std::mutex> lock(diversion_mutex_);
    const auto slot = static_cast<std::size_t>(index);
    if (slot >= kit_allocators_.size() || kit_allocators_[slot] == nullptr) return;
    kit_allocators_[slot]->setDiverted(!used_[slot].load(std::memory_order_relaxed) ||
                                       diverted_[slot].load(std::memory_order_relaxed));
  }
  // A kit allocator's slow path: the device marked used, the plugin asked
  // when it diverts the device, then the cache.
  DataPtr allocateDiverted(kit::CachingDeviceAllocator& allocator, std::size_t bytes) {
    const DeviceIndex index = allocator.device().index();
    if (!used_[static_cast<std::size_t>(index)].load(std::memory_order_relaxed)) {
      markUsed(index);
      refreshDiversion(index);
    }
    if (diverted(index)) checkAllocation(index, bytes);
    try {
      return allocator.allocateFromCache(bytes);
    } catch (const OutOfMemory& e) {
      adviseOutOfMemory(e, index, bytes);
    }
  }
  // Whether allocations on device `index` ask the plugin first.
  [[nodiscard]] bool diverted(DeviceIndex index) const noexcept {
    return diverted_[static_cast<std::size_t>(index)].load(std::memory_order_relaxed);
  }
  [[nodiscard]] const CoreCaches& caches() const noexcept override { return caches_; }
  [[nodiscard]] DeviceIndex coreCurrentDevice() const override {
    ACCEL_CHECK(!t_.ownsCurrentDevice(), InvalidArgument, "current_device: the plugin '",
                t_.plugin, "' keeps the current device of '", name(),
                "' itself (low.get_current_device); the core keeps none to tell it");
    return current_.device();
  }
  [[nodiscard]] StreamId coreCurrentStream(DeviceIndex index) const override {
    ACCEL_CHECK(!t_.ownsCurrentStream(), InvalidArgument, "current_stream: the plugin '",
                t_.plugin, "' keeps the current streams of '", name(),
                "' itself (streams.get_current); the core keeps none to tell it");
    ACCEL_CHECK(index >= 0 && index < deviceCountImpl(), InvalidArgument,
                "current_stream: ", int(index), " is not a device index of '", name(),
                "'");
    return current_.stream(index);
  }
  // Rethrows the cache's out-of-memory error of a request of `bytes`, with the
  // plugin's advice (device_memory.out_of_memory_advice) where the device's
  // capacity is what refuses it: above it, or more than is free now that the
  // out-of-memory path released the cache. Under a memory fraction the cache
  // refuses first, and its message says to change the fraction.
  [[noreturn]] void adviseOutOfMemory(const OutOfMemory& e, DeviceIndex index,
                                      std::size_t bytes) const {
    const char* advice = t_.device_memory.out_of_memory_advice;
    if (advice == nullptr || t_.device_memory.memory_info == nullptr) throw e;
    std::uint64_t total = 0;
    std::uint64_t free_bytes = 0;
    t_.device_memory.memory_info(t_.device_memory_ctx, index, &total, &free_bytes);
    dropStalePluginMessage();
    if (total == 0) throw e;  // the plugin does not know its capacity
    const bool capacity_refuses =
        bytes > total || (bytes <= memory::kMaxRequest &&
                          memory::segmentSize(memory::roundSize(bytes)) > free_bytes);
    if (!capacity_refuses) throw e;
    throw OutOfMemory(
        concat(e.message(), " (", std::string_view(advice, ::strnlen(advice, 512)), ")"));
  }
  // The plugin refusing an allocation as out of memory takes the cache's
  // out-of-memory path (the cache released, the OOM counted, recorded and
  // observed), with the plugin's reason after the cache's message.
  void checkAllocation(DeviceIndex index, std::size_t bytes) const {
    const accel_status status =
        t_.device_memory.check_allocation(t_.device_memory_ctx, index, bytes);
    if (status == ACCEL_OK) [[likely]]
      return dropStalePluginMessage();
    if (status == ACCEL_ERROR_OUT_OF_MEMORY) {
      const std::string why = takePluginMessage(status);
      try {
        caches_.device().failAsOutOfMemory(index, bytes, allocationStream(index));
      } catch (const OutOfMemory& e) {
        if (why.empty()) throw;
        throw OutOfMemory(concat(e.message(), " [", why, "]"));
      }
    }
    fail(status, "device_memory.check_allocation");
  }

 protected:
  // ---- low ----
  bool isBuiltImpl() const override { return askProbe(t_.low.is_built, t_.ctx); }
  bool isAvailableImpl() const override { return askProbe(t_.low.is_available, t_.ctx); }
  int deviceCountImpl() const override {
    // Once initialised, the count the caches, allocators and generators were
    // built for: devices do not come and go within a process, and a plugin
    // whose count changes must not move the index checks past them.
    if (const int built = built_count_.load(std::memory_order_acquire); built > 0)
      return built;
    const int count = t_.low.device_count(t_.ctx);
    dropStalePluginMessage();
    return count < 0 ? 0 : std::min(count, static_cast<int>(kMaxDevicesPerType));
  }
  // Without devices, a hook that needs one says why the backend has none
  // when the plugin can tell (low.unavailable_reason, since 1.4): there is
  // no index to name.
  [[noreturn]] void failBadDeviceIndex(DeviceIndex index, int count,
                                       HookId hook) const override {
    if (count == 0) refuseUnavailable(hook);
    AcceleratorHooks::failBadDeviceIndex(index, count, hook);
  }
  void refuseUnavailable(HookId hook) const {
    if (std::string why = unavailableReasonOf(t_); !why.empty()) {
      throw NotAvailable(concat("'", name(), "' is not available: ", why, " (",
                                hookInfo(hook).name, "() needs a device)"));
    }
  }
  DeviceIndex getCurrentDeviceImpl() const override {
    if (!t_.ownsCurrentDevice()) return current_.device();
    std::int8_t device = 0;
    check(t_.low.get_current_device(t_.ctx, &device), "low.get_current_device");
    return device;
  }
  void setCurrentDeviceImpl(DeviceIndex index) override {
    if (!t_.ownsCurrentDevice()) return current_.setDevice(index);
    check(t_.low.set_current_device(t_.ctx, index), "low.set_current_device");
  }
  DeviceIndex exchangeDeviceImpl(DeviceIndex index) override {
    if (!t_.ownsCurrentDevice()) return current_.exchangeDevice(index);
    return AcceleratorHooks::exchangeDeviceImpl(index);
  }

  // ---- high ----
  void initImpl() override {
    // The plugin's init runs once: a retry after the core's part failed (no
    // devices) does not run it again. initImpl runs under the base's init
    // mutex, so plain fields do.
    if (!plugin_initialised_) {
      check(t_.high.init(t_.ctx), "high.init");
      plugin_initialised_ = true;
    }
    // Set last: a retried init after a failure part-way builds what is
    // missing.
    if (built_count_.load(std::memory_order_relaxed) > 0) return;
    const int count = deviceCountImpl();
    caches_.build(name(), count);
    {
      std::lock_guard<std::mutex> lock(diversion_mutex_);
      allocators_.clear();
      kit_allocators_.clear();
      for (int i = 0; i < count; ++i) {
        const auto index = static_cast<DeviceIndex>(i);
        if (t_.ownsCurrentStream()) {
          allocators_.push_back(
              std::make_unique<CDeviceAllocator>(*this, caches_.device(), index));
          kit_allocators_.push_back(nullptr);
          continue;
        }
        // Diverted until the device is used (which the slow path marks).
        auto allocator = std::make_unique<kit::CachingDeviceAllocator>(
            caches_.device(), index, current_, &detour_, true);
        kit_allocators_.push_back(allocator.get());
        allocators_.push_back(std::move(allocator));
      }
    }
    generators_ = std::make_unique<DefaultGenerators>(
        deviceType(), count, [this] { return getCurrentDeviceImpl(); });
    serveDefaultGeneratorsFrom(*generators_);
    built_count_.store(count, std::memory_order_release);
  }
  bool hasPrimaryContextImpl(DeviceIndex index) const override {
    if (t_.high.has_primary_context != nullptr)
      return askProbe(t_.high.has_primary_context, t_.ctx, static_cast<int8_t>(index));
    return caches_.ready() &&
           used_[static_cast<std::size_t>(index)].load(std::memory_order_relaxed);
  }
  const Generator& getDefaultGeneratorImpl(DeviceIndex index) override {
    return generators_->get(index);
  }
  Generator getNewGeneratorImpl(DeviceIndex index) override {
    return makePhiloxGenerator(Device(deviceType(), index));
  }
  Device getDeviceFromPtrImpl(const void* ptr) const override {
    if (std::optional<DeviceIndex> device = caches_.device().deviceOf(ptr))
      return Device(deviceType(), *device);
    // Past the caches: memory the plugin's runtime knows (since 1.4).
    if (std::optional<DeviceIndex> device = caches_.runtimeDeviceOf(
            name(), ptr, built_count_.load(std::memory_order_acquire)))
      return Device(deviceType(), *device);
    if (deviceCountImpl() == 0) refuseUnavailable(HookId::getDeviceFromPtr);
    throw InvalidArgument(concat(ptr, " is not device memory of '", name(),
                                 "' (no segment of its caching allocator holds it",
                                 caches_.asksRuntimeForDevices()
                                     ? ", and its plugin's runtime does not know it)"
                                     : ")"));
  }
  Allocator& getPinnedMemoryAllocatorImpl() override { return caches_.pinned(); }
  bool isPinnedPtrImpl(const void* ptr) const override {
    return (caches_.ready() && caches_.pinned().isPinnedPtr(ptr)) ||
           caches_.runtimePinned(ptr);
  }
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override {
    const auto slot = static_cast<std::size_t>(index);
    ACCEL_CHECK(slot < allocators_.size(), InvalidArgument, "'", name(), "' has ",
                allocators_.size(), " devices (its plugin '", t_.plugin,
                "' counted them at init); device ", int(index), " is not one of them");
    return *allocators_[slot];
  }

  // ---- device ----
  void deviceSynchronizeImpl(DeviceIndex index) override {
    check(t_.device.synchronize(t_.ctx, index), "device.synchronize");
  }
  std::string showConfigImpl() const override { return showConfigOf(t_, name()); }
  DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const override {
    return propertiesOf(t_, name(), index);
  }

  // ---- streams ----
  Stream getCurrentStreamImpl(DeviceIndex index) const override {
    return allocationStream(index);
  }
  Stream getDefaultStreamImpl(DeviceIndex index) const override {
    StreamId id = kDefaultStreamId;
    check(t_.streams.get_default(t_.ctx, index, &id), "streams.get_default");
    known_streams_.add(index, id);
    return Stream(Device(deviceType(), index), id);
  }
  Stream getNewStreamImpl(DeviceIndex index, int priority) override {
    StreamId id = kDefaultStreamId;
    check(t_.streams.create(t_.ctx, index, priority, &id), "streams.create");
    known_streams_.add(index, id);
    return Stream(Device(deviceType(), index), id);
  }
  void setCurrentStreamImpl(Stream stream) override {
    if (!t_.ownsCurrentStream()) {
      requireKnownStream(stream, HookId::setCurrentStream);
      return current_.setStream(stream.device.index(), stream.id);
    }
    check(t_.streams.set_current(t_.ctx, toCStream(stream)), "streams.set_current");
  }
  Stream exchangeStreamImpl(Stream stream) override {
    if (t_.ownsCurrentStream()) return AcceleratorHooks::exchangeStreamImpl(stream);
    requireKnownStream(stream, HookId::exchangeStream);
    return Stream(stream.device,
                  current_.exchangeStream(stream.device.index(), stream.id));
  }
  bool queryStreamImpl(Stream stream) const override {
    std::int32_t done = 0;
    check(t_.streams.query(t_.ctx, toCStream(stream), &done), "streams.query");
    return done != 0;
  }
  void synchronizeStreamImpl(Stream stream) const override {
    check(t_.streams.synchronize(t_.ctx, toCStream(stream)), "streams.synchronize");
  }
  std::pair<int, int> streamPriorityRangeImpl() const override {
    return newStreamPriorityRangeImpl(getCurrentDeviceImpl());
  }
  std::pair<int, int> newStreamPriorityRangeImpl(DeviceIndex index) const override {
    std::int32_t lowest = 0;
    std::int32_t greatest = 0;
    check(t_.streams.priority_range(t_.ctx, index, &lowest, &greatest),
          "streams.priority_range");
    return {lowest, greatest};
  }

  // ---- events ----
  EventId createEventImpl(DeviceIndex index, EventFlags flags) override {
    const std::uint32_t bits = (flags.enable_timing ? ACCEL_EVENT_ENABLE_TIMING : 0u) |
                               (flags.blocking_sync ? ACCEL_EVENT_BLOCKING_SYNC : 0u) |
                               (flags.interprocess ? ACCEL_EVENT_INTERPROCESS : 0u);
    std::uint64_t event = kNoEvent;
    check(t_.events.create(t_.ctx, index, bits, &event), "events.create");
    return event;
  }
  void destroyEventImpl(EventId event) noexcept override {
    t_.events.destroy(t_.ctx, event);
    dropStalePluginMessage();
  }
  void recordEventImpl(EventId event, Stream stream) override {
    check(t_.events.record(t_.ctx, event, toCStream(stream)), "events.record");
  }
  void blockStreamImpl(EventId event, Stream stream) override {
    check(t_.events.block(t_.ctx, event, toCStream(stream)), "events.block");
  }
  bool queryEventImpl(EventId event) const override {
    std::int32_t done = 0;
    check(t_.events.query(t_.ctx, event, &done), "events.query");
    return done != 0;
  }
  void synchronizeEventImpl(EventId event) const override {
    check(t_.events.synchronize(t_.ctx, event), "events.synchronize");
  }
  double elapsedTimeImpl(EventId start, EventId end) const override {
    double ms = 0;
    check(t_.events.elapsed_ms(t_.ctx, start, end, &ms), "events.elapsed_ms");
    return ms;
  }

  // ---- memory: the core's caches (CachingAllocatorHooks), and the
  // capacity only from a plugin that can tell it ----
  memory::CachingAllocator& cachingAllocator() const override { return caches_.device(); }
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override {
    return &caches_.pinned();
  }
  DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const override {
    caches_.requireCapacity(name(), HookId::getMemoryInfo);
    return CachingAllocatorHooks::getMemoryInfoImpl(index);
  }
  void setMemoryFractionImpl(double fraction, DeviceIndex index) override {
    caches_.requireCapacity(name(), HookId::setMemoryFraction);
    CachingAllocatorHooks::setMemoryFractionImpl(fraction, index);
  }

  // ---- graphs: the plugin's, with the core's private pools ----
  GraphId graphCreateImpl(bool keep_graph) override {
    std::uint64_t graph = kNoGraph;
    check(t_.graphs.create(t_.ctx, keep_graph ? 1 : 0, &graph), "graphs.create");
    std::lock_guard<std::mutex> lock(graph_mutex_);
    // A live id handed out again would lose the pool its graph holds.
    ACCEL_CHECK(graphs_.emplace(graph, GraphPool{}).second, DeviceError, "'", name(),
                "': its plugin '", t_.plugin, "' returned graph id ", graph,
                " from graphs.create while that graph is alive; a plugin hands out a "
                "new id per graph");
    return graph;
  }
  void graphDestroyImpl(GraphId graph) override {
    check(t_.graphs.destroy(t_.ctx, graph), "graphs.destroy");
    std::lock_guard<std::mutex> lock(graph_mutex_);
    if (auto it = graphs_.find(graph); it != graphs_.end()) {
      releasePool(it->second);
      graphs_.erase(it);
    }
  }
  void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) override {
    // The current stream of the current device, as CUDA captures; its
    // allocations go to the capture's pool from here on. The lock covers the
    // whole begin, so that two captures cannot claim one stream.
    const DeviceIndex device = getCurrentDeviceImpl();
    const Stream stream = allocationStream(device);
    const std::string_view hook = hookInfo(HookId::graphCaptureBegin).name;
    std::lock_guard<std::mutex> lock(graph_mutex_);
    auto it = graphs_.find(graph);
    ACCEL_CHECK(it != graphs_.end(), InvalidArgument, hook, "(): ", graph,
                " is not a graph of '", name(), "'; create one with ",
                hookInfo(HookId::graphCreate).name);
    ACCEL_CHECK(!it->second.holds_pool, DeviceError, hook, "(): graph ", graph, " of '",
                name(), "' is captured already; ", hookInfo(HookId::graphReset).name,
                "() it before capturing again");
    for (const auto& [other, g] : graphs_) {
      ACCEL_CHECK(!g.capturing || g.stream != stream, DeviceError, hook, "(): stream ",
                  stream, " of '", name(), "' is already being captured by graph ", other,
                  "; end that capture first (", hookInfo(HookId::graphCaptureEnd).name,
                  ")");
    }
    check(t_.graphs.capture_begin(t_.ctx, graph, toCStream(stream),
                                  static_cast<std::int32_t>(mode)),
          "graphs.capture_begin");
    // The plugin captures from here: a pool that cannot be set up gives the
    // capture up (ended and reset, the graph empty again).
    memory::CachingAllocator& cache = caches_.device();
    MempoolId chosen{};
    try {
      chosen = pool.isDefault() ? cache.createPool() : pool;
      cache.retainPool(device, chosen);
      try {
        cache.beginAllocateToPool(device, chosen, stream);
      } catch (...) {
        cache.releasePool(device, chosen);
        throw;
      }
    } catch (...) {
      (void)t_.graphs.capture_end(t_.ctx, graph);
      (void)t_.graphs.reset(t_.ctx, graph);
      clearPluginError();
      throw;
    }
    markUsed(device);
    it->second = GraphPool{chosen, stream, true, true, {}};
  }
  void graphCaptureEndImpl(GraphId graph) override {
    const accel_status status = t_.graphs.capture_end(t_.ctx, graph);
    {
      std::lock_guard<std::mutex> lock(graph_mutex_);
      if (auto it = graphs_.find(graph); it != graphs_.end() && it->second.capturing) {
        GraphPool& g = it->second;
        endCapture(g);
        // A capture the plugin refused to end is discarded: the graph is
        // empty again and needs no pool.
        if (status != ACCEL_OK) releasePool(g);
      }
    }
    check(status, "graphs.capture_end");
  }
  void graphInstantiateImpl(GraphId graph) override {
    check(t_.graphs.instantiate(t_.ctx, graph), "graphs.instantiate");
  }
  void graphReplayImpl(GraphId graph) override {
    if (t_.graphs.prepare_replay != nullptr)
      check(t_.graphs.prepare_replay(t_.ctx, graph), "graphs.prepare_replay");
    check(t_.graphs.replay(t_.ctx, graph), "graphs.replay");
  }
  void graphResetImpl(GraphId graph) override {
    check(t_.graphs.reset(t_.ctx, graph), "graphs.reset");
    std::lock_guard<std::mutex> lock(graph_mutex_);
    if (auto it = graphs_.find(graph); it != graphs_.end()) releasePool(it->second);
  }
  void joinCapture(accel_stream capturing, accel_stream joined) override {
    const Stream from(Device(deviceType(), capturing.device), capturing.id);
    const Stream to(Device(deviceType(), joined.device), joined.id);
    ACCEL_CHECK(from.device == to.device && from != to, InvalidArgument,
                "join_capture: ", to, " cannot join the capture of ", from,
                "; a stream joins a capture of another stream of its own device");
    checkDeviceIndex(from.device.index());
    std::lock_guard<std::mutex> lock(graph_mutex_);
    for (auto& [id, g] : graphs_) {
      if (!g.capturing || g.stream != from) continue;
      if (std::find(g.joined.begin(), g.joined.end(), to) != g.joined.end()) return;
      g.joined.reserve(g.joined.size() + 1);
      caches_.device().beginAllocateToPool(to.device.index(), g.pool, to);
      g.joined.push_back(to);
      return;
    }
    throw InvalidArgument(concat("join_capture: ", from, " of '", name(),
                                 "' is not being captured; a stream joins a capture "
                                 "begun with ",
                                 hookInfo(HookId::graphCaptureBegin).name));
  }
  MempoolId graphPoolImpl(GraphId graph) const override {
    std::lock_guard<std::mutex> lock(graph_mutex_);
    auto it = graphs_.find(graph);
    ACCEL_CHECK(it != graphs_.end(), InvalidArgument, hookInfo(HookId::graphPool).name,
                "(): ", graph, " is not a graph of '", name(), "'; create one with ",
                hookInfo(HookId::graphCreate).name);
    return it->second.pool;
  }

  // ---- copies ----
  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override {
    check(t_.copies.host_to_device(t_.ctx, dst, src, bytes, toCStream(stream)),
          "copies.host_to_device");
  }
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override {
    check(t_.copies.device_to_host(t_.ctx, dst, src, bytes, toCStream(stream)),
          "copies.device_to_host");
  }
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream stream) override {
    check(t_.copies.device_to_device(t_.ctx, dst, src, bytes, toCStream(stream)),
          "copies.device_to_device");
  }

 private:
  // The stream ids the plugin handed out (get_default, create), for a
  // plugin whose current streams the core keeps: a current stream is one
  // the plugin made. Ids 0 to 63 (what backends hand out in practice) are a
  // bit each, tested without a lock; others are kept in a set.
  class KnownStreams {
   public:
    void add(DeviceIndex index, StreamId id) const {
      if (id >= 0 && id < 64) {
        std::atomic<std::uint64_t>& bits = bits_[static_cast<std::size_t>(index)];
        const std::uint64_t bit = std::uint64_t{1} << id;
        // Known already (the usual case): no write to a shared line.
        if ((bits.load(std::memory_order_relaxed) & bit) == 0)
          bits.fetch_or(bit, std::memory_order_relaxed);
        return;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      others_.emplace(index, id);
    }
    [[nodiscard]] bool has(DeviceIndex index, StreamId id) const {
      if (id == kDefaultStreamId) return true;  // the current stream at the start
      if (id >= 0 && id < 64) {
        return (bits_[static_cast<std::size_t>(index)].load(std::memory_order_relaxed) >>
                id) &
               1u;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      return others_.count({index, id}) != 0;
    }

   private:
    mutable std::array<std::atomic<std::uint64_t>, kMaxDevicesPerType> bits_{};
    mutable std::mutex mutex_;
    mutable std::set<std::pair<DeviceIndex, StreamId>> others_;
  };

  void requireKnownStream(Stream stream, HookId hook) const {
    ACCEL_CHECK(known_streams_.has(stream.device.index(), stream.id), InvalidArgument,
                hookInfo(hook).name, "(): ", stream, " is not a stream of '", name(),
                "': its plugin '", t_.plugin, "' never handed out stream id ", stream.id,
                " on ", stream.device, "; get streams from ",
                hookInfo(HookId::getDefaultStream).name, ", ",
                hookInfo(HookId::getCurrentStream).name, " or ",
                hookInfo(HookId::getNewStream).name);
  }

  // ---- fill ----
  void fillRandomImpl(Stream stream, DeviceFill kind, void* data, std::size_t count,
                      double a, double b, const Generator& generator) override {
    check(t_.fill.fill(t_.ctx, toCStream(stream), static_cast<std::int32_t>(kind), data,
                       count, a, b, pluginGeneratorHandle(generator)),
          "fill.fill");
  }

  // A graph's private pool while the core holds it.
  struct GraphPool {
    MempoolId pool{};
    Stream stream;
    bool holds_pool = false;
    bool capturing = false;
    std::vector<Stream> joined;  // streams that joined the capture (join_capture)
  };
  // Ends the pool use of the capture's stream and of the streams that
  // joined it. graph_mutex_ held.
  void endCapture(GraphPool& g) {
    memory::CachingAllocator& cache = caches_.device();
    const DeviceIndex device = g.stream.device.index();
    cache.endAllocateToPool(device, g.pool, g.stream);
    for (const Stream& joined : g.joined) cache.endAllocateToPool(device, g.pool, joined);
    g.joined.clear();
    g.capturing = false;
  }

  void check(accel_status status, const char* function) const {
    if (status != ACCEL_OK) [[unlikely]]
      fail(status, function);
    dropStalePluginMessage();
  }
  [[noreturn]] void fail(accel_status status, const char* function) const {
    if (status == ACCEL_ERROR_NOT_IMPLEMENTED) failNotImplemented(function);
    throwPluginStatus(status, name(), function);
  }
  [[noreturn]] void failUnsupported(HookId hook) const override {
    refuseGroupAfterVersion(t_, name(), hook);
    AcceleratorHooks::failUnsupported(hook);
  }
  // A function of a declared group that the plugin did not write: the hook
  // it serves is unimplemented (HookNotImplemented), so that `accel check`
  // blames it rather than the hook a case was about.
  [[noreturn]] void failNotImplemented(const char* function) const {
    const std::string message = takePluginMessage(ACCEL_ERROR_NOT_IMPLEMENTED);
    const std::optional<HookId> hook = hookOfFunction(function);
    if (!hook) throwPluginStatus(ACCEL_ERROR_NOT_SUPPORTED, name(), function);
    throw HookNotImplemented(
        *hook,
        concat("'", name(), "' does not implement ", hookInfo(*hook).name,
               "() although it declares the '", hookGroupName(hookInfo(*hook).group),
               "' group: its plugin answered ", function,
               " with ACCEL_ERROR_NOT_IMPLEMENTED", message.empty() ? "" : " (", message,
               message.empty() ? "" : ")",
               ". This is a bug in the backend's plugin: report it to its maintainers "
               "(`accel check "
               "--backend ",
               name(), "` shows every such gap)"));
  }
  // graph_mutex_ held.
  void releasePool(GraphPool& g) {
    const DeviceIndex device = g.stream.device.index();
    if (g.capturing) endCapture(g);
    if (g.holds_pool) caches_.device().releasePool(device, g.pool);
    g = GraphPool{};
  }

  const CPluginTables t_;
  kit::ThreadCurrent current_;  // for a plugin that does not keep them itself
  CoreCaches caches_;
  bool plugin_initialised_ = false;  // under the base's init mutex
  std::atomic<int> built_count_{0};  // set last by a successful init
  // Built by the first successful initImpl, with the caches.
  // The kit's Detour of this backend's allocators (allocateDiverted).
  class Detour final : public kit::CachingDeviceAllocator::Detour {
   public:
    explicit Detour(CPluginHooks& hooks) noexcept : hooks_(hooks) {}
    DataPtr allocate(kit::CachingDeviceAllocator& allocator, std::size_t bytes) override {
      return hooks_.allocateDiverted(allocator, bytes);
    }
    [[noreturn]] void outOfMemory(const OutOfMemory& error,
                                  const kit::CachingDeviceAllocator& allocator,
                                  std::size_t bytes) override {
      hooks_.adviseOutOfMemory(error, allocator.device().index(), bytes);
    }

   private:
    CPluginHooks& hooks_;
  };
  Detour detour_{*this};
  std::mutex diversion_mutex_;  // guards kit_allocators_ and their diverted flags
  std::vector<std::unique_ptr<Allocator>> allocators_;
  std::vector<kit::CachingDeviceAllocator*> kit_allocators_;  // null: CDeviceAllocator
  std::unique_ptr<DefaultGenerators> generators_;
  std::array<std::atomic<bool>, kMaxDevicesPerType> used_{};
  std::array<std::atomic<bool>, kMaxDevicesPerType> diverted_{};
  KnownStreams known_streams_;
  mutable std::mutex graph_mutex_;
  std::map<GraphId, GraphPool> graphs_;
};

// A backend with ACCEL_BACKEND_SYNCHRONOUS: the core's synchronous-device
// kit answers the current device, streams, events, graphs and copies; the
// plugin gives its device count, init, description and raw memory.
class CSynchronousPluginHooks final : public kit::SynchronousCachingHooks,
                                      public CBackendAccess {
 public:
  explicit CSynchronousPluginHooks(CPluginTables tables)
      : SynchronousCachingHooks(tables.type, tables.groups,
                                tables.synchronous_device_count),
        t_(std::move(tables)),
        caches_(t_) {
    caches_.recordIn(addresses());
  }

  [[noreturn]] void failUnsupported(HookId hook) const override {
    refuseGroupAfterVersion(t_, name(), hook);
    SynchronousCachingHooks::failUnsupported(hook);
  }

  [[nodiscard]] CDeviceBlock findBlock(const void* ptr) const override {
    return caches_.findBlock(name(), ptr);
  }
  [[nodiscard]] const CoreCaches& caches() const noexcept override { return caches_; }
  [[nodiscard]] DeviceIndex coreCurrentDevice() const override {
    return getCurrentDevice();
  }
  [[nodiscard]] StreamId coreCurrentStream(DeviceIndex index) const override {
    return getCurrentStream(index).id;
  }
  void joinCapture(accel_stream /*capturing*/, accel_stream /*joined*/) override {
    throw NotSupported(concat("join_capture: '", name(),
                              "' is a synchronous backend, whose captures (the core's) "
                              "hold one stream; no stream joins them"));
  }

  void divertAllocations(DeviceIndex /*index*/, bool /*on*/) override {
    throw InvalidArgument(concat("divert_allocations: '", name(),
                                 "' is a synchronous backend, whose allocators the "
                                 "core's kit serves; only an asynchronous backend's "
                                 "allocations can be diverted"));
  }

 protected:
  bool isBuiltImpl() const override { return askProbe(t_.low.is_built, t_.ctx); }
  bool isAvailableImpl() const override {
    return deviceCount() > 0 && askProbe(t_.low.is_available, t_.ctx);
  }
  void initImpl() override {
    // No devices: init succeeds (the hooks contract) without asking the
    // plugin, whose init runs once, when there is something to run it for.
    if (!plugin_initialised_ && deviceCount() > 0) {
      const accel_status status = t_.high.init(t_.ctx);
      if (status != ACCEL_OK) throwPluginStatus(status, name(), "high.init");
      plugin_initialised_ = true;
    }
    caches_.build(name(), deviceCount());
    SynchronousCachingHooks::initImpl();
  }
  bool hasPrimaryContextImpl(DeviceIndex index) const override {
    if (t_.high.has_primary_context != nullptr)
      return askProbe(t_.high.has_primary_context, t_.ctx, static_cast<int8_t>(index));
    return SynchronousCachingHooks::hasPrimaryContextImpl(index);
  }
  Device getDeviceFromPtrImpl(const void* ptr) const override {
    // The kit's map holds the caches' segments, and its refusals tell pinned
    // and freed memory apart; past it, memory the plugin's runtime knows
    // (since 1.4).
    if (caches_.asksRuntimeForDevices() && !addresses().find(ptr)) {
      if (std::optional<DeviceIndex> device =
              caches_.runtimeDeviceOf(name(), ptr, deviceCount()))
        return Device(deviceType(), *device);
    }
    return SynchronousCachingHooks::getDeviceFromPtrImpl(ptr);
  }
  bool isPinnedPtrImpl(const void* ptr) const override {
    return SynchronousCachingHooks::isPinnedPtrImpl(ptr) || caches_.runtimePinned(ptr);
  }
  Allocator& getPinnedMemoryAllocatorImpl() override { return caches_.pinned(); }
  std::string showConfigImpl() const override { return showConfigOf(t_, name()); }
  DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const override {
    return propertiesOf(t_, name(), index);
  }
  memory::CachingAllocator& cachingAllocator() const override { return caches_.device(); }
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override {
    return &caches_.pinned();
  }
  DeviceMemoryInfo getMemoryInfoImpl(DeviceIndex index) const override {
    caches_.requireCapacity(name(), HookId::getMemoryInfo);
    return SynchronousCachingHooks::getMemoryInfoImpl(index);
  }
  void setMemoryFractionImpl(double fraction, DeviceIndex index) override {
    caches_.requireCapacity(name(), HookId::setMemoryFraction);
    SynchronousCachingHooks::setMemoryFractionImpl(fraction, index);
  }

 private:
  const CPluginTables t_;
  CoreCaches caches_;
  bool plugin_initialised_ = false;  // under the base's init mutex
};

DataPtr CDeviceAllocator::allocate(std::size_t bytes) {
  const DeviceIndex index = device_.index();
  hooks_.markUsed(index);
  if (hooks_.diverted(index)) [[unlikely]]
    hooks_.checkAllocation(index, bytes);
  try {
    return cache_.allocate(index, bytes, hooks_.allocationStream(index));
  } catch (const OutOfMemory& e) {
    hooks_.adviseOutOfMemory(e, index, bytes);
  }
}

}  // namespace

std::unique_ptr<AcceleratorHooks> makeCPluginHooks(accel_core& core,
                                                   const accel_backend& backend) {
  CPluginTables tables = readCPluginTables(core, backend);
  // The layers the environment turns on start before the first backend's
  // tables are copied, so that their observers see this one's.
  startEnvironmentLayers();
  if (tableObserversAdded()) wrapTablesForObservers(tables);
  if (tables.synchronous)
    return std::make_unique<CSynchronousPluginHooks>(std::move(tables));
  return std::make_unique<CPluginHooks>(std::move(tables));
}

namespace {

// The C backend hooks of `device_type`, for `service`.
CBackendAccess& cBackendOf(std::int32_t device_type, const char* service) {
  ACCEL_CHECK(device_type >= 0 && device_type < kMaxDeviceTypes &&
                  isValidDeviceType(static_cast<DeviceType>(device_type)),
              InvalidArgument, service, ": ", device_type,
              " is not a registered device type");
  // The backend's own hooks, behind the hook layers' decorator when a layer is on.
  auto* hooks = dynamic_cast<CBackendAccess*>(const_cast<AcceleratorHooks*>(
      &ownHooks(getHooks(static_cast<DeviceType>(device_type)))));
  ACCEL_CHECK(hooks != nullptr, InvalidArgument, service, ": '",
              deviceTypeName(static_cast<DeviceType>(device_type)),
              "' has no backend registered through the plugin ABI");
  return *hooks;
}

}  // namespace

std::int8_t cPluginCurrentDevice(std::int32_t device_type) {
  return cBackendOf(device_type, "current_device").coreCurrentDevice();
}

std::int64_t cPluginCurrentStream(std::int32_t device_type, std::int8_t device) {
  return cBackendOf(device_type, "current_stream").coreCurrentStream(device);
}

std::int32_t useCPluginBlock(std::int32_t device_type, const void* ptr,
                             accel_block_use*& use, std::int8_t& device, void*& base,
                             std::size_t& requested) {
  const CoreCaches& caches = cBackendOf(device_type, "use_block").caches();
  if (!caches.ready()) return ACCEL_BLOCK_NONE;
  memory::CachingAllocator& cache = caches.device();
  const std::optional<DeviceIndex> index = cache.deviceOf(ptr);
  if (!index) return ACCEL_BLOCK_NONE;
  memory::BlockUse taken = cache.useBlock(*index, ptr);
  if (!taken) {
    const std::optional<memory::BlockInfo> found = cache.findBlock(*index, ptr);
    return found ? ACCEL_BLOCK_FREED : ACCEL_BLOCK_NONE;
  }
  device = *index;
  base = taken.info().base;
  requested = taken.info().requested;
  use = reinterpret_cast<accel_block_use*>(new memory::BlockUse(std::move(taken)));
  return ACCEL_BLOCK_LIVE;
}

void releaseCPluginBlockUse(accel_block_use* use) noexcept {
  delete reinterpret_cast<memory::BlockUse*>(use);
}

void joinCPluginCapture(std::int32_t device_type, accel_stream capturing,
                        accel_stream joined) {
  cBackendOf(device_type, "join_capture").joinCapture(capturing, joined);
}

CDeviceBlock findCPluginBlock(std::int32_t device_type, const void* ptr) {
  return cBackendOf(device_type, "find_device_block").findBlock(ptr);
}

void divertCPluginAllocations(std::int32_t device_type, std::int8_t device, bool on) {
  cBackendOf(device_type, "divert_allocations").divertAllocations(device, on);
}

}  // namespace accel::detail
