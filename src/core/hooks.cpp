#include "accel/hooks.h"

#include <exception>

#include "accel/error.h"

namespace accel {

AcceleratorHooks::AcceleratorHooks(DeviceType type, Capabilities capabilities)
    : type_(type), capabilities_(capabilities) {}

AcceleratorHooks::~AcceleratorHooks() = default;

std::string_view AcceleratorHooks::name() const noexcept { return deviceTypeName(type_); }

void AcceleratorHooks::failUnsupported(std::string_view hook, HookGroup group) const {
  if (!capabilities_.has(group)) {
    throw NotSupported(detail::concat(
        "'", name(), "' does not support ", hook,
        "(): the backend does not declare the '", hookGroupName(group),
        "' group (it declares: ", capabilities_.str(),
        "). Check getHooks(type).supports(HookGroup) before calling, or use a backend "
        "that provides it"));
  }
  throw NotSupported(detail::concat(
      "'", name(), "' does not implement ", hook, "() although it declares the '",
      hookGroupName(group),
      "' group; this is a bug in the backend: report it to its maintainers "
      "(`accel check --backend ",
      name(), "` shows every such gap)"));
}

void AcceleratorHooks::raiseUnsupported(std::string_view hook, HookGroup group) const {
  failUnsupported(hook, group);
  std::terminate();  // unreachable: failUnsupported throws; this tells the compiler so
}

void AcceleratorHooks::requireGroup(HookGroup group, std::string_view hook) const {
  if (!capabilities_.has(group)) [[unlikely]]
    raiseUnsupported(hook, group);
}

void AcceleratorHooks::failBadDeviceIndex(DeviceIndex index, int count,
                                          std::string_view hook, HookGroup) const {
  throw InvalidArgument(detail::concat(
      "device index ", int(index), " out of range [0, ", count, ") for '", name(), "'",
      hook.empty() ? std::string() : detail::concat(" (", hook, ")"),
      count == 0 ? std::string("; the backend reports no devices")
                 : detail::concat("; use an index from 0 to ", count - 1)));
}

void AcceleratorHooks::checkIndex(DeviceIndex index, std::string_view hook,
                                  HookGroup group) const {
  int count = deviceCount();
  if (index < 0 || index >= count) [[unlikely]]
    failBadDeviceIndex(index, count, hook, group);
}

DeviceIndex AcceleratorHooks::resolveIndex(DeviceIndex index, std::string_view hook,
                                           HookGroup group) const {
  int count = deviceCount();
  // With no devices there is no current device to resolve -1 to either.
  if (count == 0) [[unlikely]]
    failBadDeviceIndex(index, count, hook, group);
  if (index == kCurrentDevice) index = getCurrentDeviceImpl();
  if (index < 0 || index >= count) [[unlikely]]
    failBadDeviceIndex(index, count, hook, group);
  return index;
}

void AcceleratorHooks::checkDeviceIndex(DeviceIndex index) const {
  checkIndex(index, "checkDeviceIndex", HookGroup::Low);
}

DeviceIndex AcceleratorHooks::resolveDeviceIndex(DeviceIndex index) const {
  return resolveIndex(index, "resolveDeviceIndex", HookGroup::Low);
}

void AcceleratorHooks::checkStream(Stream stream, std::string_view hook) const {
  ACCEL_CHECK(stream.device.type() == type_, InvalidArgument, hook, "(): ", stream,
              " belongs to '", deviceTypeName(stream.device.type()), "', not '", name(),
              "'; pass it to getHooks(stream.device.type())");
  checkIndex(stream.device.index(), hook, HookGroup::Streams);
}

// ---- low ----

bool AcceleratorHooks::isBuilt() const noexcept {
  try {
    return isBuiltImpl();
  } catch (...) {
    return false;
  }
}

bool AcceleratorHooks::isAvailable() const noexcept {
  try {
    return isAvailableImpl();
  } catch (...) {
    return false;
  }
}

int AcceleratorHooks::deviceCount() const noexcept {
  try {
    int count = deviceCountImpl();
    return count < 0 ? 0 : (count > kMaxDevicesPerType ? kMaxDevicesPerType : count);
  } catch (...) {
    return 0;
  }
}

void AcceleratorHooks::setCurrentDevice(DeviceIndex index) {
  checkIndex(index, "setCurrentDevice", HookGroup::Low);
  setCurrentDeviceImpl(index);
}

DeviceIndex AcceleratorHooks::exchangeDevice(DeviceIndex index) {
  checkIndex(index, "exchangeDevice", HookGroup::Low);
  return exchangeDeviceImpl(index);
}

DeviceIndex AcceleratorHooks::maybeExchangeDevice(DeviceIndex index) {
  int count = deviceCount();
  if (count == 0) [[unlikely]]
    failBadDeviceIndex(index, count, "maybeExchangeDevice", HookGroup::Low);
  if (index < 0 || index >= count) return getCurrentDevice();
  return exchangeDeviceImpl(index);
}

// ---- high ----

void AcceleratorHooks::init() { initImpl(); }

bool AcceleratorHooks::hasPrimaryContext(DeviceIndex index) const noexcept {
  if (index < 0 || index >= deviceCount()) return false;
  try {
    return hasPrimaryContextImpl(index);
  } catch (...) {
    return false;
  }
}

Generator AcceleratorHooks::getDefaultGenerator(DeviceIndex index) {
  return getDefaultGeneratorImpl(
      resolveIndex(index, "getDefaultGenerator", HookGroup::High));
}

Generator AcceleratorHooks::getNewGenerator(DeviceIndex index) {
  return getNewGeneratorImpl(resolveIndex(index, "getNewGenerator", HookGroup::High));
}

Device AcceleratorHooks::getDeviceFromPtr(const void* ptr) const {
  ACCEL_CHECK(ptr != nullptr, InvalidArgument,
              "getDeviceFromPtr(): null pointer passed to '", name(),
              "'; pass a pointer to memory allocated by this backend");
  return getDeviceFromPtrImpl(ptr);
}

Allocator& AcceleratorHooks::getPinnedMemoryAllocator() {
  return getPinnedMemoryAllocatorImpl();
}

bool AcceleratorHooks::isPinnedPtr(const void* ptr) const noexcept {
  if (ptr == nullptr) return false;
  try {
    return isPinnedPtrImpl(ptr);
  } catch (...) {
    return false;
  }
}

Allocator& AcceleratorHooks::getDeviceAllocator(DeviceIndex index) {
  return getDeviceAllocatorImpl(
      resolveIndex(index, "getDeviceAllocator", HookGroup::High));
}

// ---- device ----

void AcceleratorHooks::deviceSynchronize(DeviceIndex index) {
  requireGroup(HookGroup::Device, "deviceSynchronize");
  deviceSynchronizeImpl(resolveIndex(index, "deviceSynchronize", HookGroup::Device));
}

std::string AcceleratorHooks::showConfig() const {
  requireGroup(HookGroup::Device, "showConfig");
  return showConfigImpl();
}

DeviceProperties AcceleratorHooks::getDeviceProperties(DeviceIndex index) const {
  requireGroup(HookGroup::Device, "getDeviceProperties");
  return getDevicePropertiesImpl(
      resolveIndex(index, "getDeviceProperties", HookGroup::Device));
}

// ---- streams ----

Stream AcceleratorHooks::getCurrentStream(DeviceIndex index) const {
  requireGroup(HookGroup::Streams, "getCurrentStream");
  return getCurrentStreamImpl(
      resolveIndex(index, "getCurrentStream", HookGroup::Streams));
}

Stream AcceleratorHooks::getDefaultStream(DeviceIndex index) const {
  requireGroup(HookGroup::Streams, "getDefaultStream");
  return getDefaultStreamImpl(
      resolveIndex(index, "getDefaultStream", HookGroup::Streams));
}

Stream AcceleratorHooks::getNewStream(DeviceIndex index, int priority) {
  requireGroup(HookGroup::Streams, "getNewStream");
  auto [lowest, greatest] = streamPriorityRangeImpl();
  ACCEL_CHECK(priority >= lowest && priority <= greatest, InvalidArgument,
              "getNewStream(): priority ", priority, " is outside '", name(),
              "''s range [", lowest, ", ", greatest, "]; see streamPriorityRange()");
  return getNewStreamImpl(resolveIndex(index, "getNewStream", HookGroup::Streams),
                          priority);
}

void AcceleratorHooks::setCurrentStream(Stream stream) {
  requireGroup(HookGroup::Streams, "setCurrentStream");
  checkStream(stream, "setCurrentStream");
  setCurrentStreamImpl(stream);
}

Stream AcceleratorHooks::exchangeStream(Stream stream) {
  requireGroup(HookGroup::Streams, "exchangeStream");
  checkStream(stream, "exchangeStream");
  return exchangeStreamImpl(stream);
}

bool AcceleratorHooks::queryStream(Stream stream) const {
  requireGroup(HookGroup::Streams, "queryStream");
  checkStream(stream, "queryStream");
  return queryStreamImpl(stream);
}

void AcceleratorHooks::synchronizeStream(Stream stream) const {
  requireGroup(HookGroup::Streams, "synchronizeStream");
  checkStream(stream, "synchronizeStream");
  synchronizeStreamImpl(stream);
}

std::pair<int, int> AcceleratorHooks::streamPriorityRange() const {
  requireGroup(HookGroup::Streams, "streamPriorityRange");
  return streamPriorityRangeImpl();
}

// ---- events ----

EventId AcceleratorHooks::createEvent(DeviceIndex index, EventFlags flags) {
  requireGroup(HookGroup::Events, "createEvent");
  return createEventImpl(resolveIndex(index, "createEvent", HookGroup::Events), flags);
}

void AcceleratorHooks::destroyEvent(EventId event) noexcept {
  if (event == kNoEvent || !capabilities_.has(HookGroup::Events)) return;
  destroyEventImpl(event);
}

void AcceleratorHooks::recordEvent(EventId event, Stream stream) {
  requireGroup(HookGroup::Events, "recordEvent");
  checkStream(stream, "recordEvent");
  recordEventImpl(event, stream);
}

void AcceleratorHooks::blockStream(EventId event, Stream stream) {
  requireGroup(HookGroup::Events, "blockStream");
  checkStream(stream, "blockStream");
  blockStreamImpl(event, stream);
}

bool AcceleratorHooks::queryEvent(EventId event) const {
  requireGroup(HookGroup::Events, "queryEvent");
  return queryEventImpl(event);
}

void AcceleratorHooks::synchronizeEvent(EventId event) const {
  requireGroup(HookGroup::Events, "synchronizeEvent");
  synchronizeEventImpl(event);
}

double AcceleratorHooks::elapsedTime(EventId start, EventId end) const {
  requireGroup(HookGroup::Events, "elapsedTime");
  return elapsedTimeImpl(start, end);
}

// ---- memory ----

MemoryStats AcceleratorHooks::memoryStats(DeviceIndex index) const {
  requireGroup(HookGroup::Memory, "memoryStats");
  return memoryStatsImpl(resolveIndex(index, "memoryStats", HookGroup::Memory));
}

void AcceleratorHooks::resetPeakMemoryStats(DeviceIndex index) {
  requireGroup(HookGroup::Memory, "resetPeakMemoryStats");
  resetPeakMemoryStatsImpl(
      resolveIndex(index, "resetPeakMemoryStats", HookGroup::Memory));
}

void AcceleratorHooks::emptyCache() {
  requireGroup(HookGroup::Memory, "emptyCache");
  emptyCacheImpl();
}

void AcceleratorHooks::recordMemoryHistory(const MemoryHistoryOptions& options) {
  requireGroup(HookGroup::MemoryHistory, "recordMemoryHistory");
  recordMemoryHistoryImpl(options);
}

MemorySnapshot AcceleratorHooks::memorySnapshot(
    const MemorySnapshotOptions& options) const {
  requireGroup(HookGroup::MemoryHistory, "memorySnapshot");
  MemorySnapshotOptions resolved = options;
  if (!resolved.all_devices) {
    resolved.device =
        resolveIndex(resolved.device, "memorySnapshot", HookGroup::MemoryHistory);
  }
  return memorySnapshotImpl(resolved);
}

void AcceleratorHooks::attachOutOfMemoryObserver(OutOfMemoryObserver observer) {
  requireGroup(HookGroup::MemoryHistory, "attachOutOfMemoryObserver");
  ACCEL_CHECK(static_cast<bool>(observer), InvalidArgument,
              "attachOutOfMemoryObserver(): the observer passed to '", name(),
              "' is empty; pass a callable");
  attachOutOfMemoryObserverImpl(std::move(observer));
}

// ---- graphs ----

GraphId AcceleratorHooks::graphCreate(bool keep_graph) {
  requireGroup(HookGroup::Graphs, "graphCreate");
  return graphCreateImpl(keep_graph);
}

void AcceleratorHooks::graphDestroy(GraphId graph) {
  requireGroup(HookGroup::Graphs, "graphDestroy");
  graphDestroyImpl(graph);
}

void AcceleratorHooks::graphCaptureBegin(GraphId graph, MempoolId pool,
                                         CaptureMode mode) {
  requireGroup(HookGroup::Graphs, "graphCaptureBegin");
  graphCaptureBeginImpl(graph, pool, mode);
}

void AcceleratorHooks::graphCaptureEnd(GraphId graph) {
  requireGroup(HookGroup::Graphs, "graphCaptureEnd");
  graphCaptureEndImpl(graph);
}

void AcceleratorHooks::graphInstantiate(GraphId graph) {
  requireGroup(HookGroup::Graphs, "graphInstantiate");
  graphInstantiateImpl(graph);
}

void AcceleratorHooks::graphReplay(GraphId graph) {
  requireGroup(HookGroup::Graphs, "graphReplay");
  graphReplayImpl(graph);
}

void AcceleratorHooks::graphReset(GraphId graph) {
  requireGroup(HookGroup::Graphs, "graphReset");
  graphResetImpl(graph);
}

MempoolId AcceleratorHooks::graphPool(GraphId graph) const {
  requireGroup(HookGroup::Graphs, "graphPool");
  return graphPoolImpl(graph);
}

// ---- defaults of the overridable part: each names itself and its group ----

bool AcceleratorHooks::isBuiltImpl() const {
  raiseUnsupported("isBuilt", HookGroup::Low);
}
bool AcceleratorHooks::isAvailableImpl() const {
  raiseUnsupported("isAvailable", HookGroup::Low);
}
int AcceleratorHooks::deviceCountImpl() const {
  raiseUnsupported("deviceCount", HookGroup::Low);
}
DeviceIndex AcceleratorHooks::getCurrentDeviceImpl() const {
  raiseUnsupported("getCurrentDevice", HookGroup::Low);
}
void AcceleratorHooks::setCurrentDeviceImpl(DeviceIndex) {
  raiseUnsupported("setCurrentDevice", HookGroup::Low);
}
DeviceIndex AcceleratorHooks::exchangeDeviceImpl(DeviceIndex index) {
  DeviceIndex previous = getCurrentDeviceImpl();
  if (previous != index) setCurrentDeviceImpl(index);
  return previous;
}
void AcceleratorHooks::initImpl() { raiseUnsupported("init", HookGroup::High); }
bool AcceleratorHooks::hasPrimaryContextImpl(DeviceIndex) const {
  raiseUnsupported("hasPrimaryContext", HookGroup::High);
}
Generator AcceleratorHooks::getDefaultGeneratorImpl(DeviceIndex) {
  raiseUnsupported("getDefaultGenerator", HookGroup::High);
}
Generator AcceleratorHooks::getNewGeneratorImpl(DeviceIndex) {
  raiseUnsupported("getNewGenerator", HookGroup::High);
}
Device AcceleratorHooks::getDeviceFromPtrImpl(const void*) const {
  raiseUnsupported("getDeviceFromPtr", HookGroup::High);
}
Allocator& AcceleratorHooks::getPinnedMemoryAllocatorImpl() {
  raiseUnsupported("getPinnedMemoryAllocator", HookGroup::High);
}
bool AcceleratorHooks::isPinnedPtrImpl(const void*) const {
  raiseUnsupported("isPinnedPtr", HookGroup::High);
}
Allocator& AcceleratorHooks::getDeviceAllocatorImpl(DeviceIndex) {
  raiseUnsupported("getDeviceAllocator", HookGroup::High);
}
void AcceleratorHooks::deviceSynchronizeImpl(DeviceIndex) {
  raiseUnsupported("deviceSynchronize", HookGroup::Device);
}
std::string AcceleratorHooks::showConfigImpl() const {
  raiseUnsupported("showConfig", HookGroup::Device);
}
DeviceProperties AcceleratorHooks::getDevicePropertiesImpl(DeviceIndex) const {
  raiseUnsupported("getDeviceProperties", HookGroup::Device);
}
Stream AcceleratorHooks::getCurrentStreamImpl(DeviceIndex) const {
  raiseUnsupported("getCurrentStream", HookGroup::Streams);
}
Stream AcceleratorHooks::getDefaultStreamImpl(DeviceIndex) const {
  raiseUnsupported("getDefaultStream", HookGroup::Streams);
}
Stream AcceleratorHooks::getNewStreamImpl(DeviceIndex, int) {
  raiseUnsupported("getNewStream", HookGroup::Streams);
}
void AcceleratorHooks::setCurrentStreamImpl(Stream) {
  raiseUnsupported("setCurrentStream", HookGroup::Streams);
}
Stream AcceleratorHooks::exchangeStreamImpl(Stream stream) {
  Stream previous = getCurrentStreamImpl(stream.device.index());
  setCurrentStreamImpl(stream);
  return previous;
}
bool AcceleratorHooks::queryStreamImpl(Stream) const {
  raiseUnsupported("queryStream", HookGroup::Streams);
}
void AcceleratorHooks::synchronizeStreamImpl(Stream) const {
  raiseUnsupported("synchronizeStream", HookGroup::Streams);
}
std::pair<int, int> AcceleratorHooks::streamPriorityRangeImpl() const { return {0, 0}; }
EventId AcceleratorHooks::createEventImpl(DeviceIndex, EventFlags) {
  raiseUnsupported("createEvent", HookGroup::Events);
}
void AcceleratorHooks::destroyEventImpl(EventId) noexcept {}
void AcceleratorHooks::recordEventImpl(EventId, Stream) {
  raiseUnsupported("recordEvent", HookGroup::Events);
}
void AcceleratorHooks::blockStreamImpl(EventId, Stream) {
  raiseUnsupported("blockStream", HookGroup::Events);
}
bool AcceleratorHooks::queryEventImpl(EventId) const {
  raiseUnsupported("queryEvent", HookGroup::Events);
}
void AcceleratorHooks::synchronizeEventImpl(EventId) const {
  raiseUnsupported("synchronizeEvent", HookGroup::Events);
}
double AcceleratorHooks::elapsedTimeImpl(EventId, EventId) const {
  raiseUnsupported("elapsedTime", HookGroup::Events);
}
MemoryStats AcceleratorHooks::memoryStatsImpl(DeviceIndex) const {
  raiseUnsupported("memoryStats", HookGroup::Memory);
}
void AcceleratorHooks::resetPeakMemoryStatsImpl(DeviceIndex) {
  raiseUnsupported("resetPeakMemoryStats", HookGroup::Memory);
}
void AcceleratorHooks::emptyCacheImpl() {
  raiseUnsupported("emptyCache", HookGroup::Memory);
}
void AcceleratorHooks::recordMemoryHistoryImpl(const MemoryHistoryOptions&) {
  raiseUnsupported("recordMemoryHistory", HookGroup::MemoryHistory);
}
MemorySnapshot AcceleratorHooks::memorySnapshotImpl(const MemorySnapshotOptions&) const {
  raiseUnsupported("memorySnapshot", HookGroup::MemoryHistory);
}
void AcceleratorHooks::attachOutOfMemoryObserverImpl(OutOfMemoryObserver) {
  raiseUnsupported("attachOutOfMemoryObserver", HookGroup::MemoryHistory);
}
GraphId AcceleratorHooks::graphCreateImpl(bool) {
  raiseUnsupported("graphCreate", HookGroup::Graphs);
}
void AcceleratorHooks::graphDestroyImpl(GraphId) {
  raiseUnsupported("graphDestroy", HookGroup::Graphs);
}
void AcceleratorHooks::graphCaptureBeginImpl(GraphId, MempoolId, CaptureMode) {
  raiseUnsupported("graphCaptureBegin", HookGroup::Graphs);
}
void AcceleratorHooks::graphCaptureEndImpl(GraphId) {
  raiseUnsupported("graphCaptureEnd", HookGroup::Graphs);
}
void AcceleratorHooks::graphInstantiateImpl(GraphId) {
  raiseUnsupported("graphInstantiate", HookGroup::Graphs);
}
void AcceleratorHooks::graphReplayImpl(GraphId) {
  raiseUnsupported("graphReplay", HookGroup::Graphs);
}
void AcceleratorHooks::graphResetImpl(GraphId) {
  raiseUnsupported("graphReset", HookGroup::Graphs);
}
MempoolId AcceleratorHooks::graphPoolImpl(GraphId) const {
  raiseUnsupported("graphPool", HookGroup::Graphs);
}

}  // namespace accel
