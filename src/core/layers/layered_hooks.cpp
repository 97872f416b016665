#include "layers/layered_hooks.h"

#include <climits>

#include "layers/layered_allocator.h"
#include "layers/layered_call.h"

namespace accel::detail {

namespace {

// Every group: which ones the backend declares is its answer, asked when the
// decorator's groups are first asked for (settleCapabilitiesImpl), so that
// building a decorator at registration never runs the backend's discovery.
Capabilities everyGroup() noexcept {
  return Capabilities::fromBits((1u << kNumHookGroups) - 1);
}

HookCall& onStream(HookCall& call, Stream stream) noexcept {
  call.device = stream.device.index();
  call.stream = stream.id;
  return call;
}

// A copy's call: its destination, source and size, on its stream.
HookCall& asCopy(HookCall& call, void* dst, const void* src, std::size_t bytes,
                 Stream stream) noexcept {
  call.ptr = dst;
  call.ptr2 = src;
  call.bytes = bytes;
  return onStream(call, stream);
}

}  // namespace

LayeredHooks::LayeredHooks(AcceleratorHooks& inner)
    : AcceleratorHooks(inner.deviceType(), Capabilities(), everyGroup()), inner_(inner) {}

// Never runs for the decorators the registry makes (never destroyed); a
// test's own decorator is destroyed with its allocators.
LayeredHooks::~LayeredHooks() = default;

HookCall LayeredHooks::callOf(HookId hook) const noexcept {
  // begin_ticks: set by runLayered when a layer wants it.
  return HookCall{hook, deviceType(), &inner_};
}

Capabilities LayeredHooks::settleCapabilitiesImpl() const {
  return inner_.capabilities();
}

// ---- probes: forwarded without the layers (they must never throw) ----
bool LayeredHooks::isBuiltImpl() const { return inner_.isBuilt(); }
bool LayeredHooks::isAvailableImpl() const { return inner_.isAvailable(); }
int LayeredHooks::deviceCountImpl() const { return inner_.deviceCount(); }
bool LayeredHooks::hasPrimaryContextImpl(DeviceIndex index) const {
  return inner_.hasPrimaryContext(index);
}

// ---- low ----
DeviceIndex LayeredHooks::getCurrentDeviceImpl() const {
  HookCall call = callOf(HookId::getCurrentDevice);
  return runLayered(call, [&] { return inner_.getCurrentDevice(); });
}
void LayeredHooks::setCurrentDeviceImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::setCurrentDevice);
  call.device = index;
  runLayered(call, [&] { inner_.setCurrentDevice(index); });
}
DeviceIndex LayeredHooks::exchangeDeviceImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::exchangeDevice);
  call.device = index;
  return runLayered(call, [&] { return inner_.exchangeDevice(index); });
}

// ---- high ----
void LayeredHooks::initImpl() {
  HookCall call = callOf(HookId::init);
  runLayered(call, [&] { inner_.init(); });
}
const Generator& LayeredHooks::getDefaultGeneratorImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::getDefaultGenerator);
  call.device = index;
  return runLayered(
      call, [&]() -> const Generator& { return inner_.getDefaultGenerator(index); });
}
Generator LayeredHooks::getNewGeneratorImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::getNewGenerator);
  call.device = index;
  return runLayered(call, [&] { return inner_.getNewGenerator(index); });
}
Device LayeredHooks::getDeviceFromPtrImpl(const void* ptr) const {
  HookCall call = callOf(HookId::getDeviceFromPtr);
  call.ptr = ptr;
  return runLayered(call, [&] { return inner_.getDeviceFromPtr(ptr); });
}
bool LayeredHooks::isPinnedPtrImpl(const void* ptr) const {
  HookCall call = callOf(HookId::isPinnedPtr);
  call.ptr = ptr;
  return runLayered(call, [&] { return inner_.isPinnedPtr(ptr); });
}
Allocator& LayeredHooks::getPinnedMemoryAllocatorImpl() {
  HookCall call = callOf(HookId::getPinnedMemoryAllocator);
  Allocator& backend =
      runLayered(call, [&]() -> Allocator& { return inner_.getPinnedMemoryAllocator(); });
  if (LayeredAllocator* made = pinned_allocator_.load(std::memory_order_acquire))
    return *made;
  std::lock_guard<std::mutex> lock(allocators_mutex_);
  if (LayeredAllocator* made = pinned_allocator_.load(std::memory_order_acquire))
    return *made;
  owned_allocators_.push_back(
      std::make_unique<LayeredAllocator>(deviceType(), backend, /*pinned=*/true));
  pinned_allocator_.store(owned_allocators_.back().get(), std::memory_order_release);
  return *owned_allocators_.back();
}
Allocator& LayeredHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::getDeviceAllocator);
  call.device = index;
  Allocator& backend =
      runLayered(call, [&]() -> Allocator& { return inner_.getDeviceAllocator(index); });
  std::atomic<LayeredAllocator*>& slot =
      device_allocators_[static_cast<std::size_t>(index)];
  if (LayeredAllocator* made = slot.load(std::memory_order_acquire)) return *made;
  std::lock_guard<std::mutex> lock(allocators_mutex_);
  if (LayeredAllocator* made = slot.load(std::memory_order_acquire)) return *made;
  owned_allocators_.push_back(
      std::make_unique<LayeredAllocator>(deviceType(), backend, /*pinned=*/false));
  slot.store(owned_allocators_.back().get(), std::memory_order_release);
  return *owned_allocators_.back();
}

// ---- device ----
void LayeredHooks::deviceSynchronizeImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::deviceSynchronize);
  call.device = index;
  runLayered(call, [&] { inner_.deviceSynchronize(index); });
}
std::string LayeredHooks::showConfigImpl() const {
  HookCall call = callOf(HookId::showConfig);
  return runLayered(call, [&] { return inner_.showConfig(); });
}
DeviceProperties LayeredHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  HookCall call = callOf(HookId::getDeviceProperties);
  call.device = index;
  return runLayered(call, [&] { return inner_.getDeviceProperties(index); });
}

// ---- streams ----
Stream LayeredHooks::getCurrentStreamImpl(DeviceIndex index) const {
  HookCall call = callOf(HookId::getCurrentStream);
  call.device = index;
  return runLayered(call, [&] {
    Stream stream = inner_.getCurrentStream(index);
    call.result = static_cast<std::uint64_t>(stream.id);
    return stream;
  });
}
Stream LayeredHooks::getDefaultStreamImpl(DeviceIndex index) const {
  HookCall call = callOf(HookId::getDefaultStream);
  call.device = index;
  return runLayered(call, [&] {
    Stream stream = inner_.getDefaultStream(index);
    call.result = static_cast<std::uint64_t>(stream.id);
    return stream;
  });
}
Stream LayeredHooks::getNewStreamImpl(DeviceIndex index, int priority) {
  HookCall call = callOf(HookId::getNewStream);
  call.device = index;
  return runLayered(call, [&] {
    Stream stream = inner_.getNewStream(index, priority);
    call.result = static_cast<std::uint64_t>(stream.id);
    return stream;
  });
}
void LayeredHooks::setCurrentStreamImpl(Stream stream) {
  HookCall call = callOf(HookId::setCurrentStream);
  runLayered(onStream(call, stream), [&] { inner_.setCurrentStream(stream); });
}
Stream LayeredHooks::exchangeStreamImpl(Stream stream) {
  HookCall call = callOf(HookId::exchangeStream);
  return runLayered(onStream(call, stream),
                    [&] { return inner_.exchangeStream(stream); });
}
bool LayeredHooks::queryStreamImpl(Stream stream) const {
  HookCall call = callOf(HookId::queryStream);
  return runLayered(onStream(call, stream), [&] { return inner_.queryStream(stream); });
}
void LayeredHooks::synchronizeStreamImpl(Stream stream) const {
  HookCall call = callOf(HookId::synchronizeStream);
  runLayered(onStream(call, stream), [&] { inner_.synchronizeStream(stream); });
}
std::pair<int, int> LayeredHooks::streamPriorityRangeImpl() const {
  HookCall call = callOf(HookId::streamPriorityRange);
  return runLayered(call, [&] { return inner_.streamPriorityRange(); });
}
// The backend's getNewStream checks the priority against its own range,
// asked for the right device (its newStreamPriorityRangeImpl, which the
// decorator cannot call): the decorator's check lets every priority through.
std::pair<int, int> LayeredHooks::newStreamPriorityRangeImpl(DeviceIndex) const {
  return {INT_MIN, INT_MAX};
}

// ---- events ----
EventId LayeredHooks::createEventImpl(DeviceIndex index, EventFlags flags) {
  HookCall call = callOf(HookId::createEvent);
  call.device = index;
  return runLayered(call, [&] {
    EventId event = inner_.createEvent(index, flags);
    call.result = event;
    return event;
  });
}
void LayeredHooks::destroyEventImpl(EventId event) noexcept {
  HookCall call = callOf(HookId::destroyEvent);
  call.object = event;
  try {
    runLayered(call, [&] { inner_.destroyEvent(event); });
  } catch (...) {
    // A layer refused the call (validation's throw mode already reported
    // it): destroying never throws, and the event is left as it was.
  }
}
void LayeredHooks::recordEventImpl(EventId event, Stream stream) {
  HookCall call = callOf(HookId::recordEvent);
  call.object = event;
  runLayered(onStream(call, stream), [&] { inner_.recordEvent(event, stream); });
}
void LayeredHooks::blockStreamImpl(EventId event, Stream stream) {
  HookCall call = callOf(HookId::blockStream);
  call.object = event;
  runLayered(onStream(call, stream), [&] { inner_.blockStream(event, stream); });
}
bool LayeredHooks::queryEventImpl(EventId event) const {
  HookCall call = callOf(HookId::queryEvent);
  call.object = event;
  return runLayered(call, [&] { return inner_.queryEvent(event); });
}
void LayeredHooks::synchronizeEventImpl(EventId event) const {
  HookCall call = callOf(HookId::synchronizeEvent);
  call.object = event;
  runLayered(call, [&] { inner_.synchronizeEvent(event); });
}
double LayeredHooks::elapsedTimeImpl(EventId start, EventId end) const {
  HookCall call = callOf(HookId::elapsedTime);
  call.object = start;
  call.object2 = end;
  return runLayered(call, [&] { return inner_.elapsedTime(start, end); });
}

// ---- memory ----
MemoryStats LayeredHooks::memoryStatsImpl(DeviceIndex index) const {
  HookCall call = callOf(HookId::memoryStats);
  call.device = index;
  return runLayered(call, [&] { return inner_.memoryStats(index); });
}
void LayeredHooks::resetPeakMemoryStatsImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::resetPeakMemoryStats);
  call.device = index;
  runLayered(call, [&] { inner_.resetPeakMemoryStats(index); });
}
void LayeredHooks::emptyCacheImpl() {
  HookCall call = callOf(HookId::emptyCache);
  runLayered(call, [&] { inner_.emptyCache(); });
}
DeviceMemoryInfo LayeredHooks::getMemoryInfoImpl(DeviceIndex index) const {
  HookCall call = callOf(HookId::getMemoryInfo);
  call.device = index;
  return runLayered(call, [&] { return inner_.getMemoryInfo(index); });
}
void LayeredHooks::resetAccumulatedMemoryStatsImpl(DeviceIndex index) {
  HookCall call = callOf(HookId::resetAccumulatedMemoryStats);
  call.device = index;
  runLayered(call, [&] { inner_.resetAccumulatedMemoryStats(index); });
}
void LayeredHooks::setMemoryFractionImpl(double fraction, DeviceIndex index) {
  HookCall call = callOf(HookId::setMemoryFraction);
  call.device = index;
  runLayered(call, [&] { inner_.setMemoryFraction(fraction, index); });
}
MemoryStats LayeredHooks::hostMemoryStatsImpl() const {
  HookCall call = callOf(HookId::hostMemoryStats);
  return runLayered(call, [&] { return inner_.hostMemoryStats(); });
}
void LayeredHooks::recordMemoryHistoryImpl(const MemoryHistoryOptions& options) {
  HookCall call = callOf(HookId::recordMemoryHistory);
  runLayered(call, [&] { inner_.recordMemoryHistory(options); });
}
MemorySnapshot LayeredHooks::memorySnapshotImpl(
    const MemorySnapshotOptions& options) const {
  HookCall call = callOf(HookId::memorySnapshot);
  return runLayered(call, [&] { return inner_.memorySnapshot(options); });
}
void LayeredHooks::attachOutOfMemoryObserverImpl(OutOfMemoryObserver observer) {
  HookCall call = callOf(HookId::attachOutOfMemoryObserver);
  runLayered(call, [&] { inner_.attachOutOfMemoryObserver(std::move(observer)); });
}

// ---- graphs ----
GraphId LayeredHooks::graphCreateImpl(bool keep_graph) {
  HookCall call = callOf(HookId::graphCreate);
  return runLayered(call, [&] {
    GraphId graph = inner_.graphCreate(keep_graph);
    call.result = graph;
    return graph;
  });
}
void LayeredHooks::graphDestroyImpl(GraphId graph) {
  HookCall call = callOf(HookId::graphDestroy);
  call.object = graph;
  runLayered(call, [&] { inner_.graphDestroy(graph); });
}
void LayeredHooks::graphCaptureBeginImpl(GraphId graph, MempoolId pool,
                                         CaptureMode mode) {
  HookCall call = callOf(HookId::graphCaptureBegin);
  call.object = graph;
  call.capture_mode = mode;
  runLayered(call, [&] { inner_.graphCaptureBegin(graph, pool, mode); });
}
void LayeredHooks::graphCaptureEndImpl(GraphId graph) {
  HookCall call = callOf(HookId::graphCaptureEnd);
  call.object = graph;
  runLayered(call, [&] { inner_.graphCaptureEnd(graph); });
}
void LayeredHooks::graphInstantiateImpl(GraphId graph) {
  HookCall call = callOf(HookId::graphInstantiate);
  call.object = graph;
  runLayered(call, [&] { inner_.graphInstantiate(graph); });
}
void LayeredHooks::graphReplayImpl(GraphId graph) {
  HookCall call = callOf(HookId::graphReplay);
  call.object = graph;
  runLayered(call, [&] { inner_.graphReplay(graph); });
}
void LayeredHooks::graphResetImpl(GraphId graph) {
  HookCall call = callOf(HookId::graphReset);
  call.object = graph;
  runLayered(call, [&] { inner_.graphReset(graph); });
}
MempoolId LayeredHooks::graphPoolImpl(GraphId graph) const {
  HookCall call = callOf(HookId::graphPool);
  call.object = graph;
  return runLayered(call, [&] { return inner_.graphPool(graph); });
}

// ---- copies and fill ----
void LayeredHooks::copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  HookCall call = callOf(HookId::copyHostToDevice);
  runLayered(asCopy(call, dst, src, bytes, stream),
             [&] { inner_.copyHostToDevice(dst, src, bytes, stream); });
}
void LayeredHooks::copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  HookCall call = callOf(HookId::copyDeviceToHost);
  runLayered(asCopy(call, dst, src, bytes, stream),
             [&] { inner_.copyDeviceToHost(dst, src, bytes, stream); });
}
void LayeredHooks::copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                          Stream stream) {
  HookCall call = callOf(HookId::copyDeviceToDevice);
  runLayered(asCopy(call, dst, src, bytes, stream),
             [&] { inner_.copyDeviceToDevice(dst, src, bytes, stream); });
}
void LayeredHooks::fillRandomImpl(Stream stream, DeviceFill kind, void* data,
                                  std::size_t count, double a, double b,
                                  const Generator& generator) {
  HookCall call = callOf(HookId::fillRandom);
  call.ptr = data;
  call.bytes = count;
  if (generator.defined()) call.device2 = generator.device().index();
  runLayered(onStream(call, stream),
             [&] { inner_.fillRandom(stream, kind, data, count, a, b, generator); });
}

memory::CachingAllocator* LayeredHooks::coreDeviceCache() const {
  return inner_.coreDeviceCache(LayerKey{});
}
memory::PinnedCachingAllocator* LayeredHooks::corePinnedCache() const {
  return inner_.corePinnedCache(LayerKey{});
}
Device LayeredHooks::deviceQueryForChecks(const void* ptr) const {
  return inner_.getDeviceFromPtr(ptr);
}
bool LayeredHooks::pinnedQueryForChecks(const void* ptr) const noexcept {
  return inner_.isPinnedPtr(ptr);
}

}  // namespace accel::detail
