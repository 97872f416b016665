#include "accel/hooks.h"

#include <exception>
#include <utility>

#include "accel/context.h"
#include "accel/error.h"
#include "hooks/destructor_error.h"
#include "hooks/fork_handlers.h"
#include "layers/layer_registry.h"

namespace accel {

AcceleratorHooks::AcceleratorHooks(DeviceType type, Capabilities capabilities)
    : type_(type), capabilities_(capabilities), firm_(capabilities) {}

AcceleratorHooks::AcceleratorHooks(DeviceType type, Capabilities capabilities,
                                   Capabilities provisional)
    : type_(type),
      capabilities_(Capabilities::fromBits(capabilities.bits() & ~provisional.bits())),
      provisional_(provisional),
      firm_(capabilities_),
      capabilities_settled_(provisional.bits() == Capabilities().bits()) {}

Capabilities AcceleratorHooks::settleCapabilitiesImpl() const { return provisional_; }

Capabilities AcceleratorHooks::settleCapabilities() const noexcept {
  // Settling asks the devices: the bounded first discovery runs first, and
  // outside the once (a backend's probe may itself ask which groups it
  // declares). While it has not finished (a driver slow or hung while
  // loading) the answer is the firm groups only, and the groups stay
  // unsettled: a later ask, once the driver has answered, settles them.
  if (!discoverForSettling()) return firm_;
  std::call_once(settle_once_, [this] {
    Capabilities kept;
    try {
      kept = settleCapabilitiesImpl();
    } catch (...) {
      kept = Capabilities();  // keeps none (Low and High are always there)
    }
    // Only provisional groups can be added: a group the backend returns
    // that it did not declare provisionally stays undeclared.
    capabilities_ = Capabilities::fromBits(capabilities_.bits() |
                                           (kept.bits() & provisional_.bits()));
    capabilities_settled_.store(true, std::memory_order_release);
  });
  return capabilities_;
}

// ~AcceleratorHooks is in discovery.cpp: it waits for a first discovery still running.

std::string_view AcceleratorHooks::name() const noexcept { return deviceTypeName(type_); }

HookNotImplemented::HookNotImplemented(HookId hook, std::string message,
                                       std::source_location where)
    : NotSupported(std::move(message), where), hook_(hook) {}

HookNotImplemented::~HookNotImplemented() = default;

namespace {

// "getNewStream()": how messages name the hook that was called.
std::string callOf(HookId hook) { return detail::concat(hookInfo(hook).name, "()"); }

std::string rangeMessage(DeviceIndex index, int count, std::string_view backend) {
  return detail::concat("device index ", int(index), " out of range [0, ", count,
                        ") for '", backend, "'");
}

std::string rangeAdvice(int count) {
  return count == 0 ? std::string("; the backend reports no devices")
                    : detail::concat("; use an index from 0 to ", count - 1);
}

// Which thread runs an initImpl, for the re-entry check (a thread cannot
// wait for itself).
bool isInitialisingThread(const std::atomic<std::thread::id>& owner) noexcept {
  return owner.load(std::memory_order_acquire) == std::this_thread::get_id();
}

}  // namespace

void AcceleratorHooks::failUnsupported(HookId hook) const {
  const HookInfo& info = hookInfo(hook);
  if (!declared().has(info.group)) {
    throw NotSupported(detail::concat(
        "'", name(), "' does not support ", callOf(hook),
        ": the backend does not declare the '", hookGroupName(info.group),
        "' group (it declares: ", declared().str(),
        "). Check getHooks(type).supports(HookGroup) before calling, or use a backend "
        "that provides it"));
  }
  throw HookNotImplemented(
      hook, detail::concat("'", name(), "' does not implement ", callOf(hook),
                           " although it declares the '", hookGroupName(info.group),
                           "' group: the backend must override ", info.impl,
                           ". This is a bug in the backend: report it to its maintainers "
                           "(`accel check --backend ",
                           name(), "` shows every such gap)"));
}

void AcceleratorHooks::raiseUnsupported(HookId hook) const {
  failUnsupported(hook);
  std::terminate();  // unreachable: failUnsupported throws; this tells the compiler so
}

void AcceleratorHooks::failBadDeviceIndex(DeviceIndex index, int count,
                                          HookId hook) const {
  throw InvalidArgument(detail::concat(rangeMessage(index, count, name()), " (",
                                       hookInfo(hook).name, ")", rangeAdvice(count)));
}

void AcceleratorHooks::raiseBadDeviceIndex(DeviceIndex index, int count,
                                           HookId hook) const {
  // A reference kept across fork() answers 0 devices in the child: say why.
  if (init_state_.load(std::memory_order_acquire) == InitState::Forked) [[unlikely]]
    detail::throwForkRefusal(callOf(hook), name());
  // No devices because the first discovery has not finished within its
  // bound: say so, rather than only that the range is empty.
  if (count == 0) {
    std::string problem = discoveryProblem();
    if (!problem.empty()) {
      throw NotAvailable(detail::concat(rangeMessage(index, count, name()), " (",
                                        hookInfo(hook).name, "): ", problem));
    }
  }
  failBadDeviceIndex(index, count, hook);
  std::terminate();  // unreachable, as in raiseUnsupported
}

void AcceleratorHooks::checkIndex(DeviceIndex index, HookId hook) const {
  int count = rangeCount();
  if (index < 0 || index >= count) [[unlikely]]
    raiseBadDeviceIndex(index, count, hook);
}

DeviceIndex AcceleratorHooks::resolveIndex(DeviceIndex index, HookId hook) const {
  int count = rangeCount();
  if (index == kCurrentDevice) {
    // With no devices there is no current device to resolve -1 to either.
    if (count == 0) [[unlikely]]
      raiseBadDeviceIndex(index, count, hook);
    index = getCurrentDeviceImpl();
  }
  if (index < 0 || index >= count) [[unlikely]]
    raiseBadDeviceIndex(index, count, hook);
  return index;
}

void AcceleratorHooks::checkDeviceIndex(DeviceIndex index) const {
  int count = rangeCount();
  ACCEL_CHECK(index >= 0 && index < count, InvalidArgument,
              rangeMessage(index, count, name()), rangeAdvice(count));
}

DeviceIndex AcceleratorHooks::resolveDeviceIndex(DeviceIndex index) const {
  if (index == kCurrentDevice && rangeCount() > 0) index = getCurrentDeviceImpl();
  checkDeviceIndex(index);
  return index;
}

void AcceleratorHooks::checkStream(Stream stream, HookId hook) const {
  ACCEL_CHECK(stream.device.type() == type_, InvalidArgument, callOf(hook), ": ", stream,
              " belongs to '", deviceTypeName(stream.device.type()), "', not '", name(),
              "'; pass it to getHooks(stream.device.type())");
  checkIndex(stream.device.index(), hook);
}

void AcceleratorHooks::initSlow(HookId hook) const {
  const InitState state = init_state_.load(std::memory_order_acquire);
  if (state == InitState::Refused) [[unlikely]]
    raiseUnsupported(hook);
  if (state == InitState::Forked) [[unlikely]]
    detail::throwForkRefusal(callOf(hook), name());
  requireDiscovered(hook);
  ACCEL_CHECK(!isInitialisingThread(init_thread_), InvalidArgument, callOf(hook), " on '",
              name(), "' was called from inside its own ", hookInfo(HookId::init).impl,
              "(), which would wait for itself: initImpl must not call the hooks that "
              "initialise (only the probes and the current-device hooks)");
  std::lock_guard<std::mutex> lock(init_mutex_);
  if (init_state_.load(std::memory_order_acquire) == InitState::Done) return;
  init_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  init_state_.store(InitState::Running, std::memory_order_release);
  try {
    // Hooks objects are never const themselves (they are created with new);
    // only the view through a const hook is.
    const_cast<AcceleratorHooks*>(this)->initImpl();
  } catch (...) {
    init_state_.store(InitState::NotStarted, std::memory_order_release);
    init_thread_.store(std::thread::id(), std::memory_order_release);
    throw;  // not initialised: the next call retries
  }
  initialized_device_count_ = deviceCount();
  init_thread_.store(std::thread::id(), std::memory_order_release);
  init_state_.store(InitState::Done, std::memory_order_release);
}

void AcceleratorHooks::restoreCurrentDevice(GuardKey, DeviceIndex index,
                                            const char* guard) noexcept {
  try {
    if (getCurrentDeviceImpl() != index) setCurrentDeviceImpl(index);
  } catch (...) {
    detail::reportDestructorError(guard);
  }
}

void AcceleratorHooks::restoreCurrentStream(GuardKey, Stream stream,
                                            const char* guard) noexcept {
  try {
    setCurrentStreamImpl(stream);
  } catch (...) {
    detail::reportDestructorError(guard);
  }
}

// ---- low ----

bool AcceleratorHooks::isBuilt() const noexcept {
  try {
    return isBuiltImpl();
  } catch (...) {
    return false;
  }
}

void AcceleratorHooks::setCurrentDevice(DeviceIndex index) {
  checkIndex(index, HookId::setCurrentDevice);
  setCurrentDeviceImpl(index);
}

DeviceIndex AcceleratorHooks::exchangeDevice(DeviceIndex index) {
  checkIndex(index, HookId::exchangeDevice);
  return exchangeDeviceImpl(index);
}

DeviceIndex AcceleratorHooks::maybeExchangeDevice(DeviceIndex index) {
  int count = rangeCount();
  if (count == 0) [[unlikely]]
    raiseBadDeviceIndex(index, count, HookId::maybeExchangeDevice);
  if (index < 0 || index >= count) return getCurrentDevice();
  return exchangeDeviceImpl(index);
}

// ---- high ----

bool AcceleratorHooks::hasPrimaryContext(DeviceIndex index) const noexcept {
  if (index < 0 || index >= deviceCount()) return false;
  try {
    return hasPrimaryContextImpl(index);
  } catch (...) {
    return false;
  }
}

const Generator& AcceleratorHooks::getDefaultGeneratorSlow(DeviceIndex index) {
  requireInit(HookId::getDefaultGenerator);
  return getDefaultGeneratorImpl(resolveIndex(index, HookId::getDefaultGenerator));
}

Generator AcceleratorHooks::getNewGenerator(DeviceIndex index) {
  requireInit(HookId::getNewGenerator);
  return getNewGeneratorImpl(resolveIndex(index, HookId::getNewGenerator));
}

Device AcceleratorHooks::getDeviceFromPtr(const void* ptr) const {
  ACCEL_CHECK(ptr != nullptr, InvalidArgument, callOf(HookId::getDeviceFromPtr),
              ": null pointer passed to '", name(),
              "'; pass a pointer to memory allocated by this backend");
  requireInit(HookId::getDeviceFromPtr);
  return getDeviceFromPtrImpl(ptr);
}

Allocator& AcceleratorHooks::getPinnedMemoryAllocator() {
  requireInit(HookId::getPinnedMemoryAllocator);
  Allocator& allocator = getPinnedMemoryAllocatorImpl();
  // Remembered so that a fork child refuses it if this backend is poisoned
  // (fork.cpp), also through a reference kept from before the fork. A hook
  // layers' allocator refuses on its own: the backend's, behind it, stays
  // the one remembered.
  if (&detail::ownHooks(*this) == this) detail::notePinnedAllocator(type_, allocator);
  return allocator;
}

bool AcceleratorHooks::isPinnedPtr(const void* ptr) const noexcept {
  if (ptr == nullptr) return false;
  // No pinned memory exists before the first discovery finished (pinning
  // initialises, which discovers first). Asking the backend before then
  // could wait for a discovery that hangs, and in a fork child of a process
  // that had discovered it the backend must not be asked at all.
  if (discovery_.load(std::memory_order_acquire) != Discovery::Done) return false;
  try {
    return isPinnedPtrImpl(ptr);
  } catch (...) {
    return false;
  }
}

Allocator& AcceleratorHooks::getDeviceAllocator(DeviceIndex index) {
  requireInit(HookId::getDeviceAllocator);
  return getDeviceAllocatorImpl(resolveIndex(index, HookId::getDeviceAllocator));
}

// ---- device ----

void AcceleratorHooks::deviceSynchronize(DeviceIndex index) {
  requireGroup(HookId::deviceSynchronize);
  requireInit(HookId::deviceSynchronize);
  deviceSynchronizeImpl(resolveIndex(index, HookId::deviceSynchronize));
}

std::string AcceleratorHooks::showConfig() const {
  requireGroup(HookId::showConfig);
  requireInit(HookId::showConfig);
  return showConfigImpl();
}

DeviceProperties AcceleratorHooks::getDeviceProperties(DeviceIndex index) const {
  requireGroup(HookId::getDeviceProperties);
  requireInit(HookId::getDeviceProperties);
  return getDevicePropertiesImpl(resolveIndex(index, HookId::getDeviceProperties));
}

// ---- streams ----

Stream AcceleratorHooks::getCurrentStream(DeviceIndex index) const {
  requireGroup(HookId::getCurrentStream);
  requireInit(HookId::getCurrentStream);
  return getCurrentStreamImpl(resolveIndex(index, HookId::getCurrentStream));
}

Stream AcceleratorHooks::getDefaultStream(DeviceIndex index) const {
  requireGroup(HookId::getDefaultStream);
  requireInit(HookId::getDefaultStream);
  return getDefaultStreamImpl(resolveIndex(index, HookId::getDefaultStream));
}

Stream AcceleratorHooks::getNewStream(DeviceIndex index, int priority) {
  requireGroup(HookId::getNewStream);
  requireInit(HookId::getNewStream);
  const DeviceIndex device = resolveIndex(index, HookId::getNewStream);
  auto [lowest, greatest] = newStreamPriorityRangeImpl(device);
  ACCEL_CHECK(priority >= lowest && priority <= greatest, InvalidArgument,
              callOf(HookId::getNewStream), ": priority ", priority, " is outside '",
              name(), "''s range [", lowest, ", ", greatest, "]; see ",
              callOf(HookId::streamPriorityRange));
  return getNewStreamImpl(device, priority);
}

void AcceleratorHooks::setCurrentStream(Stream stream) {
  requireGroup(HookId::setCurrentStream);
  requireInit(HookId::setCurrentStream);
  checkStream(stream, HookId::setCurrentStream);
  setCurrentStreamImpl(stream);
}

Stream AcceleratorHooks::exchangeStream(Stream stream) {
  requireGroup(HookId::exchangeStream);
  requireInit(HookId::exchangeStream);
  checkStream(stream, HookId::exchangeStream);
  return exchangeStreamImpl(stream);
}

bool AcceleratorHooks::queryStream(Stream stream) const {
  requireGroup(HookId::queryStream);
  requireInit(HookId::queryStream);
  checkStream(stream, HookId::queryStream);
  return queryStreamImpl(stream);
}

void AcceleratorHooks::synchronizeStream(Stream stream) const {
  requireGroup(HookId::synchronizeStream);
  requireInit(HookId::synchronizeStream);
  checkStream(stream, HookId::synchronizeStream);
  synchronizeStreamImpl(stream);
}

std::pair<int, int> AcceleratorHooks::streamPriorityRange() const {
  requireGroup(HookId::streamPriorityRange);
  requireInit(HookId::streamPriorityRange);
  return streamPriorityRangeImpl();
}

// ---- events ----

EventId AcceleratorHooks::createEvent(DeviceIndex index, EventFlags flags) {
  requireGroup(HookId::createEvent);
  requireInit(HookId::createEvent);
  return createEventImpl(resolveIndex(index, HookId::createEvent), flags);
}

void AcceleratorHooks::destroyEvent(EventId event) noexcept {
  // Before init no event can exist (createEvent initialises): nothing to free.
  if (event == kNoEvent || !declared().has(HookGroup::Events) || !isInitialized()) return;
  destroyEventImpl(event);
}

void AcceleratorHooks::recordEvent(EventId event, Stream stream) {
  requireGroup(HookId::recordEvent);
  requireInit(HookId::recordEvent);
  checkStream(stream, HookId::recordEvent);
  recordEventImpl(event, stream);
}

void AcceleratorHooks::blockStream(EventId event, Stream stream) {
  requireGroup(HookId::blockStream);
  requireInit(HookId::blockStream);
  checkStream(stream, HookId::blockStream);
  blockStreamImpl(event, stream);
}

bool AcceleratorHooks::queryEvent(EventId event) const {
  requireGroup(HookId::queryEvent);
  requireInit(HookId::queryEvent);
  return queryEventImpl(event);
}

void AcceleratorHooks::synchronizeEvent(EventId event) const {
  requireGroup(HookId::synchronizeEvent);
  requireInit(HookId::synchronizeEvent);
  synchronizeEventImpl(event);
}

double AcceleratorHooks::elapsedTime(EventId start, EventId end) const {
  requireGroup(HookId::elapsedTime);
  requireInit(HookId::elapsedTime);
  return elapsedTimeImpl(start, end);
}

// ---- memory ----

MemoryStats AcceleratorHooks::memoryStats(DeviceIndex index) const {
  requireGroup(HookId::memoryStats);
  requireInit(HookId::memoryStats);
  return memoryStatsImpl(resolveIndex(index, HookId::memoryStats));
}

void AcceleratorHooks::resetPeakMemoryStats(DeviceIndex index) {
  requireGroup(HookId::resetPeakMemoryStats);
  requireInit(HookId::resetPeakMemoryStats);
  resetPeakMemoryStatsImpl(resolveIndex(index, HookId::resetPeakMemoryStats));
}

void AcceleratorHooks::emptyCache() {
  requireGroup(HookId::emptyCache);
  // A fork child of a process that started the backend has nothing to give
  // back: what it inherited is the parent's and never returns to the driver,
  // and it cannot allocate (docs/lifecycle.md, "fork()"). Emptying is one of
  // the calls such a child may make; it does nothing.
  if (isPoisonedByFork(deviceType())) return;
  requireInit(HookId::emptyCache);
  emptyCacheImpl();
}

DeviceMemoryInfo AcceleratorHooks::getMemoryInfo(DeviceIndex index) const {
  requireGroup(HookId::getMemoryInfo);
  requireInit(HookId::getMemoryInfo);
  return getMemoryInfoImpl(resolveIndex(index, HookId::getMemoryInfo));
}

void AcceleratorHooks::resetAccumulatedMemoryStats(DeviceIndex index) {
  requireGroup(HookId::resetAccumulatedMemoryStats);
  requireInit(HookId::resetAccumulatedMemoryStats);
  resetAccumulatedMemoryStatsImpl(
      resolveIndex(index, HookId::resetAccumulatedMemoryStats));
}

void AcceleratorHooks::setMemoryFraction(double fraction, DeviceIndex index) {
  requireGroup(HookId::setMemoryFraction);
  // Written so that NaN fails too.
  ACCEL_CHECK(fraction >= 0.0 && fraction <= 1.0, InvalidArgument,
              hookInfo(HookId::setMemoryFraction).name, "(", fraction, ") on '", name(),
              "': the fraction of the device's total memory must be between 0 and 1 "
              "(0 allows nothing, 1 the whole device)");
  requireInit(HookId::setMemoryFraction);
  setMemoryFractionImpl(fraction, resolveIndex(index, HookId::setMemoryFraction));
}

MemoryStats AcceleratorHooks::hostMemoryStats() const {
  requireGroup(HookId::hostMemoryStats);
  requireInit(HookId::hostMemoryStats);
  return hostMemoryStatsImpl();
}

void AcceleratorHooks::recordMemoryHistory(const MemoryHistoryOptions& options) {
  requireGroup(HookId::recordMemoryHistory);
  requireInit(HookId::recordMemoryHistory);
  recordMemoryHistoryImpl(options);
}

MemorySnapshot AcceleratorHooks::memorySnapshot(
    const MemorySnapshotOptions& options) const {
  requireGroup(HookId::memorySnapshot);
  requireInit(HookId::memorySnapshot);
  MemorySnapshotOptions resolved = options;
  if (!resolved.all_devices) {
    resolved.device = resolveIndex(resolved.device, HookId::memorySnapshot);
  }
  return memorySnapshotImpl(resolved);
}

void AcceleratorHooks::attachOutOfMemoryObserver(OutOfMemoryObserver observer) {
  requireGroup(HookId::attachOutOfMemoryObserver);
  requireInit(HookId::attachOutOfMemoryObserver);
  ACCEL_CHECK(static_cast<bool>(observer), InvalidArgument,
              callOf(HookId::attachOutOfMemoryObserver), ": the observer passed to '",
              name(), "' is empty; pass a callable");
  attachOutOfMemoryObserverImpl(std::move(observer));
}

// ---- graphs ----

GraphId AcceleratorHooks::graphCreate(bool keep_graph) {
  requireGroup(HookId::graphCreate);
  requireInit(HookId::graphCreate);
  return graphCreateImpl(keep_graph);
}

void AcceleratorHooks::graphDestroy(GraphId graph) {
  requireGroup(HookId::graphDestroy);
  requireInit(HookId::graphDestroy);
  graphDestroyImpl(graph);
}

void AcceleratorHooks::graphCaptureBegin(GraphId graph, MempoolId pool,
                                         CaptureMode mode) {
  requireGroup(HookId::graphCaptureBegin);
  requireInit(HookId::graphCaptureBegin);
  graphCaptureBeginImpl(graph, pool, mode);
}

void AcceleratorHooks::graphCaptureEnd(GraphId graph) {
  requireGroup(HookId::graphCaptureEnd);
  requireInit(HookId::graphCaptureEnd);
  graphCaptureEndImpl(graph);
}

void AcceleratorHooks::graphInstantiate(GraphId graph) {
  requireGroup(HookId::graphInstantiate);
  requireInit(HookId::graphInstantiate);
  graphInstantiateImpl(graph);
}

void AcceleratorHooks::graphReplay(GraphId graph) {
  requireGroup(HookId::graphReplay);
  requireInit(HookId::graphReplay);
  graphReplayImpl(graph);
}

void AcceleratorHooks::graphReset(GraphId graph) {
  requireGroup(HookId::graphReset);
  requireInit(HookId::graphReset);
  graphResetImpl(graph);
}

MempoolId AcceleratorHooks::graphPool(GraphId graph) const {
  requireGroup(HookId::graphPool);
  requireInit(HookId::graphPool);
  return graphPoolImpl(graph);
}

// ---- defaults of the overridable part: each names itself and its group ----

bool AcceleratorHooks::isBuiltImpl() const { raiseUnsupported(HookId::isBuilt); }
bool AcceleratorHooks::isAvailableImpl() const { raiseUnsupported(HookId::isAvailable); }
int AcceleratorHooks::deviceCountImpl() const { raiseUnsupported(HookId::deviceCount); }
DeviceIndex AcceleratorHooks::getCurrentDeviceImpl() const {
  raiseUnsupported(HookId::getCurrentDevice);
}
void AcceleratorHooks::setCurrentDeviceImpl(DeviceIndex) {
  raiseUnsupported(HookId::setCurrentDevice);
}
DeviceIndex AcceleratorHooks::exchangeDeviceImpl(DeviceIndex index) {
  DeviceIndex previous = getCurrentDeviceImpl();
  if (previous != index) setCurrentDeviceImpl(index);
  return previous;
}
void AcceleratorHooks::initImpl() { raiseUnsupported(HookId::init); }
bool AcceleratorHooks::hasPrimaryContextImpl(DeviceIndex) const {
  raiseUnsupported(HookId::hasPrimaryContext);
}
const Generator& AcceleratorHooks::getDefaultGeneratorImpl(DeviceIndex) {
  raiseUnsupported(HookId::getDefaultGenerator);
}
Generator AcceleratorHooks::getNewGeneratorImpl(DeviceIndex) {
  raiseUnsupported(HookId::getNewGenerator);
}
Device AcceleratorHooks::getDeviceFromPtrImpl(const void*) const {
  raiseUnsupported(HookId::getDeviceFromPtr);
}
Allocator& AcceleratorHooks::getPinnedMemoryAllocatorImpl() {
  raiseUnsupported(HookId::getPinnedMemoryAllocator);
}
bool AcceleratorHooks::isPinnedPtrImpl(const void*) const {
  raiseUnsupported(HookId::isPinnedPtr);
}
Allocator& AcceleratorHooks::getDeviceAllocatorImpl(DeviceIndex) {
  raiseUnsupported(HookId::getDeviceAllocator);
}
void AcceleratorHooks::deviceSynchronizeImpl(DeviceIndex) {
  raiseUnsupported(HookId::deviceSynchronize);
}
std::string AcceleratorHooks::showConfigImpl() const {
  raiseUnsupported(HookId::showConfig);
}
DeviceProperties AcceleratorHooks::getDevicePropertiesImpl(DeviceIndex) const {
  raiseUnsupported(HookId::getDeviceProperties);
}
Stream AcceleratorHooks::getCurrentStreamImpl(DeviceIndex) const {
  raiseUnsupported(HookId::getCurrentStream);
}
Stream AcceleratorHooks::getDefaultStreamImpl(DeviceIndex) const {
  raiseUnsupported(HookId::getDefaultStream);
}
Stream AcceleratorHooks::getNewStreamImpl(DeviceIndex, int) {
  raiseUnsupported(HookId::getNewStream);
}
void AcceleratorHooks::setCurrentStreamImpl(Stream) {
  raiseUnsupported(HookId::setCurrentStream);
}
Stream AcceleratorHooks::exchangeStreamImpl(Stream stream) {
  Stream previous = getCurrentStreamImpl(stream.device.index());
  setCurrentStreamImpl(stream);
  return previous;
}
bool AcceleratorHooks::queryStreamImpl(Stream) const {
  raiseUnsupported(HookId::queryStream);
}
void AcceleratorHooks::synchronizeStreamImpl(Stream) const {
  raiseUnsupported(HookId::synchronizeStream);
}
std::pair<int, int> AcceleratorHooks::streamPriorityRangeImpl() const { return {0, 0}; }
std::pair<int, int> AcceleratorHooks::newStreamPriorityRangeImpl(DeviceIndex) const {
  return streamPriorityRangeImpl();
}
EventId AcceleratorHooks::createEventImpl(DeviceIndex, EventFlags) {
  raiseUnsupported(HookId::createEvent);
}
void AcceleratorHooks::destroyEventImpl(EventId) noexcept {}
void AcceleratorHooks::recordEventImpl(EventId, Stream) {
  raiseUnsupported(HookId::recordEvent);
}
void AcceleratorHooks::blockStreamImpl(EventId, Stream) {
  raiseUnsupported(HookId::blockStream);
}
bool AcceleratorHooks::queryEventImpl(EventId) const {
  raiseUnsupported(HookId::queryEvent);
}
void AcceleratorHooks::synchronizeEventImpl(EventId) const {
  raiseUnsupported(HookId::synchronizeEvent);
}
double AcceleratorHooks::elapsedTimeImpl(EventId, EventId) const {
  raiseUnsupported(HookId::elapsedTime);
}
MemoryStats AcceleratorHooks::memoryStatsImpl(DeviceIndex) const {
  raiseUnsupported(HookId::memoryStats);
}
void AcceleratorHooks::resetPeakMemoryStatsImpl(DeviceIndex) {
  raiseUnsupported(HookId::resetPeakMemoryStats);
}
void AcceleratorHooks::emptyCacheImpl() { raiseUnsupported(HookId::emptyCache); }
DeviceMemoryInfo AcceleratorHooks::getMemoryInfoImpl(DeviceIndex) const {
  raiseUnsupported(HookId::getMemoryInfo);
}
void AcceleratorHooks::resetAccumulatedMemoryStatsImpl(DeviceIndex) {
  raiseUnsupported(HookId::resetAccumulatedMemoryStats);
}
void AcceleratorHooks::setMemoryFractionImpl(double, DeviceIndex) {
  raiseUnsupported(HookId::setMemoryFraction);
}
MemoryStats AcceleratorHooks::hostMemoryStatsImpl() const {
  raiseUnsupported(HookId::hostMemoryStats);
}
void AcceleratorHooks::recordMemoryHistoryImpl(const MemoryHistoryOptions&) {
  raiseUnsupported(HookId::recordMemoryHistory);
}
MemorySnapshot AcceleratorHooks::memorySnapshotImpl(const MemorySnapshotOptions&) const {
  raiseUnsupported(HookId::memorySnapshot);
}
void AcceleratorHooks::attachOutOfMemoryObserverImpl(OutOfMemoryObserver) {
  raiseUnsupported(HookId::attachOutOfMemoryObserver);
}
GraphId AcceleratorHooks::graphCreateImpl(bool) { raiseUnsupported(HookId::graphCreate); }
void AcceleratorHooks::graphDestroyImpl(GraphId) {
  raiseUnsupported(HookId::graphDestroy);
}
void AcceleratorHooks::graphCaptureBeginImpl(GraphId, MempoolId, CaptureMode) {
  raiseUnsupported(HookId::graphCaptureBegin);
}
void AcceleratorHooks::graphCaptureEndImpl(GraphId) {
  raiseUnsupported(HookId::graphCaptureEnd);
}
void AcceleratorHooks::graphInstantiateImpl(GraphId) {
  raiseUnsupported(HookId::graphInstantiate);
}
void AcceleratorHooks::graphReplayImpl(GraphId) { raiseUnsupported(HookId::graphReplay); }
void AcceleratorHooks::graphResetImpl(GraphId) { raiseUnsupported(HookId::graphReset); }
MempoolId AcceleratorHooks::graphPoolImpl(GraphId) const {
  raiseUnsupported(HookId::graphPool);
}

}  // namespace accel
