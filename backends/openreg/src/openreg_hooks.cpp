#include "openreg_hooks.h"

#include <exception>
#include <sstream>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/philox_generator.h"
#include "copies.h"
#include "fork_state.h"
#include "pinned_memory.h"
#include "runtime.h"

namespace accel::openreg::detail {
namespace {

// Out of line and known not to return, so that the hot path that checks the
// fork flag saves no registers for the call.
[[noreturn, gnu::cold, gnu::noinline]] void refuseInForkedChild(HookId hook) {
  checkNotForkedChild(hookInfo(hook).name);
  std::terminate();  // unreachable: it throws in a forked child
}

}  // namespace

OpenRegHooks::OpenRegHooks(DeviceType type)
    : CachingAllocatorHooks(
          type, Capabilities{HookGroup::Device, HookGroup::Streams, HookGroup::Events,
                             HookGroup::Memory, HookGroup::MemoryHistory,
                             HookGroup::Graphs, HookGroup::Copies}) {}

OpenRegHooks::~OpenRegHooks() = default;

// The hooks base ran initImpl (so the runtime is initialised) before any
// *Impl that needs the runtime; only the fork check is left per call.
Runtime& OpenRegHooks::runtime(HookId hook) const {
  checkNotForkedChild(hookInfo(hook).name);
  return Runtime::instance();
}

// ---- low ----

bool OpenRegHooks::isBuiltImpl() const { return true; }
bool OpenRegHooks::isAvailableImpl() const {
  return Runtime::instance().probeDeviceCount() > 0;
}
int OpenRegHooks::deviceCountImpl() const {
  return Runtime::instance().probeDeviceCount();
}
// The runtime holds the current device: openreg's own API reads it too.
DeviceIndex OpenRegHooks::getCurrentDeviceImpl() const { return threadCurrentDevice(); }
void OpenRegHooks::setCurrentDeviceImpl(DeviceIndex index) {
  Runtime::instance().current().setDevice(index);
}
DeviceIndex OpenRegHooks::exchangeDeviceImpl(DeviceIndex index) {
  return Runtime::instance().current().exchangeDevice(index);
}

// ---- high ----

void OpenRegHooks::initImpl() {
  Runtime& rt = Runtime::instance();
  rt.init();
  // Created here, not on first use, so that the generator hook's fast path
  // has no null check; the generators themselves are still made per device on
  // first use. Kept across a retried init (a later step may have thrown).
  if (defaults_ == nullptr) {
    defaults_ = std::make_unique<DefaultGenerators>(deviceType(), rt.deviceCount(),
                                                    [] { return threadCurrentDevice(); });
  }
  // The hook then reads the generators inline, with no virtual call; in a
  // fork child the core withdraws this and the impl below refuses.
  serveDefaultGeneratorsFrom(*defaults_);
}

bool OpenRegHooks::hasPrimaryContextImpl(DeviceIndex index) const {
  return Runtime::instance().isActive(index);
}

// A fork-flag load and DefaultGenerators::get's inline array lookup (an index
// check and one acquire load), returning the stored handle by reference: no
// lock, once_flag, map or refcount.
const Generator& OpenRegHooks::getDefaultGeneratorImpl(DeviceIndex index) {
  if (isForkedChild()) [[unlikely]]
    refuseInForkedChild(HookId::getDefaultGenerator);
  return defaults_->get(index);
}

Generator OpenRegHooks::getNewGeneratorImpl(DeviceIndex index) {
  (void)runtime(HookId::getNewGenerator);
  return makePhiloxGenerator(Device(deviceType(), index));
}

Device OpenRegHooks::getDeviceFromPtrImpl(const void* ptr) const {
  Runtime& rt = runtime(HookId::getDeviceFromPtr);
  // The core's segment map: memory the allocator holds, in use or cached.
  if (const std::optional<DeviceIndex> index = rt.cachingAllocator().deviceOf(ptr))
    return Device(deviceType(), *index);
  if (const std::optional<DeviceIndex> range = rt.deviceOfAddress(ptr)) {
    throw InvalidArgument(accel::detail::concat(
        ptr, " is in the address range of ", Device(deviceType(), *range),
        " but in none of its memory (freed, or never allocated); pass a pointer into "
        "memory allocated on it"));
  }
  // Pinned host memory, or a foreign pointer: the kit's address map says which.
  return rt.addresses().deviceOf(ptr);
}

Allocator& OpenRegHooks::getPinnedMemoryAllocatorImpl() {
  (void)runtime(HookId::getPinnedMemoryAllocator);
  return PinnedMemory::instance();
}

bool OpenRegHooks::isPinnedPtrImpl(const void* ptr) const {
  return Runtime::instance().addresses().isPinned(ptr);
}

Allocator& OpenRegHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  return *runtime(HookId::getDeviceAllocator)
              .device(index, hookInfo(HookId::getDeviceAllocator).name)
              .allocator;
}

// ---- device ----

void OpenRegHooks::deviceSynchronizeImpl(DeviceIndex index) {
  DeviceState& device = runtime(HookId::deviceSynchronize)
                            .device(index, hookInfo(HookId::deviceSynchronize).name);
  device.faults.checkNotLost(hookInfo(HookId::deviceSynchronize).name);
  // Every stream is waited for even when one fails, so that the device is
  // idle when this returns; the first error is reported.
  std::exception_ptr first_error;
  for (const auto& stream : device.streams) {
    try {
      stream->synchronizeForDevice(hookInfo(HookId::deviceSynchronize).name);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  device.faults.checkNotLost(hookInfo(HookId::deviceSynchronize).name);
}

std::string OpenRegHooks::showConfigImpl() const {
  Runtime& rt = runtime(HookId::showConfig);
  const Config& config = rt.config();
  std::ostringstream out;
  out << "openreg: simulated accelerator (accelhooks reference backend)\n"
      << "  devices:                    " << config.device_count
      << "  (ACCEL_OPENREG_DEVICES)\n"
      << "  memory per device:          " << formatByteSize(config.memory_bytes)
      << "  (ACCEL_OPENREG_MEMORY)\n"
      << "  execution units per device: " << config.execution_units
      << "  (ACCEL_OPENREG_EXECUTION_UNITS)\n"
      << "  streams per device:         1 default + " << kStreamsPerDevice - 1
      << " pooled (priorities " << kLowestPriority << ".." << kGreatestPriority << ", "
      << kPoolStreamsPerPriority << " each)\n"
      << "  device memory protection:   PROT_NONE outside copies and kernels\n"
      << "  fault injection at start:   ";
  bool any = false;
  if (config.fail_allocation != 0) {
    out << "allocation #" << config.fail_allocation << " fails; ";
    any = true;
  }
  for (const DeviceLossRule& rule : config.lose_device) {
    out << "openreg:" << int(rule.device) << " lost after " << rule.after_operations
        << " operations; ";
    any = true;
  }
  if (config.stream_latency.count() > 0) {
    out << "stream latency " << config.stream_latency.count() << " us; ";
    any = true;
  }
  if (!any) out << "none";
  out << '\n';
  for (int i = 0; i < rt.deviceCount(); ++i) {
    const auto index = static_cast<DeviceIndex>(i);
    if (rt.isActive(index) &&
        rt.device(index, hookInfo(HookId::showConfig).name).faults.lost()) {
      out << "  openreg:" << i << " is lost\n";
    }
  }
  return std::move(out).str();
}

DeviceProperties OpenRegHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  DeviceState& device = runtime(HookId::getDeviceProperties)
                            .device(index, hookInfo(HookId::getDeviceProperties).name);
  device.faults.checkNotLost(hookInfo(HookId::getDeviceProperties).name);
  DeviceProperties properties;
  properties.name = "openreg simulated device";
  properties.total_memory_bytes = device.memory.capacity();
  properties.multiprocessor_count = device.units.state().units;
  properties.is_integrated = false;
  properties.uuid = accel::detail::concat("openreg-device-", int(index));
  return properties;
}

// ---- streams ----

Stream OpenRegHooks::getCurrentStreamImpl(DeviceIndex index) const {
  (void)runtime(HookId::getCurrentStream);
  return Stream(Device(deviceType(), index), currentStreamId(index));
}

Stream OpenRegHooks::getDefaultStreamImpl(DeviceIndex index) const {
  (void)runtime(HookId::getDefaultStream);
  return Stream(Device(deviceType(), index), kDefaultStreamId);
}

Stream OpenRegHooks::getNewStreamImpl(DeviceIndex index, int priority) {
  return runtime(HookId::getNewStream).newStream(index, priority);
}

void OpenRegHooks::setCurrentStreamImpl(Stream stream) {
  (void)runtime(HookId::setCurrentStream)
      .queue(stream, hookInfo(HookId::setCurrentStream).name);
  Runtime::instance().current().setStream(stream.device.index(), stream.id);
}

Stream OpenRegHooks::exchangeStreamImpl(Stream stream) {
  Runtime& rt = runtime(HookId::exchangeStream);
  (void)rt.queue(stream, hookInfo(HookId::exchangeStream).name);
  return Stream(stream.device,
                rt.current().exchangeStream(stream.device.index(), stream.id));
}

bool OpenRegHooks::queryStreamImpl(Stream stream) const {
  return runtime(HookId::queryStream)
      .queue(stream, hookInfo(HookId::queryStream).name)
      .query(hookInfo(HookId::queryStream).name);
}

void OpenRegHooks::synchronizeStreamImpl(Stream stream) const {
  runtime(HookId::synchronizeStream)
      .queue(stream, hookInfo(HookId::synchronizeStream).name)
      .synchronize(hookInfo(HookId::synchronizeStream).name);
}

std::pair<int, int> OpenRegHooks::streamPriorityRangeImpl() const {
  return {kLowestPriority, kGreatestPriority};
}

// ---- events ----

EventId OpenRegHooks::createEventImpl(DeviceIndex index, EventFlags flags) {
  return runtime(HookId::createEvent).events().create(index, flags);
}
void OpenRegHooks::destroyEventImpl(EventId event) noexcept {
  if (isForkedChild()) return;  // its lock may belong to a vanished thread
  Runtime::instance().events().destroy(event);
}
void OpenRegHooks::recordEventImpl(EventId event, Stream stream) {
  runtime(HookId::recordEvent).events().record(event, stream);
}
void OpenRegHooks::blockStreamImpl(EventId event, Stream stream) {
  runtime(HookId::blockStream).events().block(event, stream);
}
bool OpenRegHooks::queryEventImpl(EventId event) const {
  return runtime(HookId::queryEvent).events().query(event);
}
void OpenRegHooks::synchronizeEventImpl(EventId event) const {
  runtime(HookId::synchronizeEvent).events().synchronize(event);
}
double OpenRegHooks::elapsedTimeImpl(EventId start, EventId end) const {
  return runtime(HookId::elapsedTime).events().elapsedMilliseconds(start, end);
}

// ---- memory ----

// Every memory hook runs after the NVI base initialised openreg.
memory::CachingAllocator& OpenRegHooks::cachingAllocator() const {
  return Runtime::instance().cachingAllocator();
}

// A lost device answers nothing, its statistics included.
MemoryStats OpenRegHooks::memoryStatsImpl(DeviceIndex index) const {
  runtime(HookId::memoryStats)
      .device(index, hookInfo(HookId::memoryStats).name)
      .faults.checkNotLost(hookInfo(HookId::memoryStats).name);
  return CachingAllocatorHooks::memoryStatsImpl(index);
}

void OpenRegHooks::resetPeakMemoryStatsImpl(DeviceIndex index) {
  runtime(HookId::resetPeakMemoryStats)
      .device(index, hookInfo(HookId::resetPeakMemoryStats).name)
      .faults.checkNotLost(hookInfo(HookId::resetPeakMemoryStats).name);
  CachingAllocatorHooks::resetPeakMemoryStatsImpl(index);
}

// The simulated device's capacity (ACCEL_OPENREG memory setting, see
// docs/openreg.md) and what its segments leave free.
DeviceMemoryInfo OpenRegHooks::getMemoryInfoImpl(DeviceIndex index) const {
  runtime(HookId::getMemoryInfo)
      .device(index, hookInfo(HookId::getMemoryInfo).name)
      .faults.checkNotLost(hookInfo(HookId::getMemoryInfo).name);
  return CachingAllocatorHooks::getMemoryInfoImpl(index);
}

void OpenRegHooks::resetAccumulatedMemoryStatsImpl(DeviceIndex index) {
  runtime(HookId::resetAccumulatedMemoryStats)
      .device(index, hookInfo(HookId::resetAccumulatedMemoryStats).name)
      .faults.checkNotLost(hookInfo(HookId::resetAccumulatedMemoryStats).name);
  CachingAllocatorHooks::resetAccumulatedMemoryStatsImpl(index);
}

void OpenRegHooks::setMemoryFractionImpl(double fraction, DeviceIndex index) {
  runtime(HookId::setMemoryFraction)
      .device(index, hookInfo(HookId::setMemoryFraction).name)
      .faults.checkNotLost(hookInfo(HookId::setMemoryFraction).name);
  CachingAllocatorHooks::setMemoryFractionImpl(fraction, index);
}

memory::PinnedCachingAllocator* OpenRegHooks::pinnedCachingAllocator() const {
  return &PinnedMemory::instance().cache();
}

// ---- graphs ----

GraphId OpenRegHooks::graphCreateImpl(bool keep_graph) {
  return runtime(HookId::graphCreate).graphs().create(keep_graph);
}
void OpenRegHooks::graphDestroyImpl(GraphId graph) {
  runtime(HookId::graphDestroy).graphs().destroy(graph);
}
void OpenRegHooks::graphCaptureBeginImpl(GraphId graph, MempoolId pool,
                                         CaptureMode mode) {
  runtime(HookId::graphCaptureBegin).graphs().captureBegin(graph, pool, mode);
}
void OpenRegHooks::graphCaptureEndImpl(GraphId graph) {
  runtime(HookId::graphCaptureEnd).graphs().captureEnd(graph);
}
void OpenRegHooks::graphInstantiateImpl(GraphId graph) {
  runtime(HookId::graphInstantiate).graphs().instantiate(graph);
}
void OpenRegHooks::graphReplayImpl(GraphId graph) {
  runtime(HookId::graphReplay).graphs().replay(graph);
}
void OpenRegHooks::graphResetImpl(GraphId graph) {
  runtime(HookId::graphReset).graphs().reset(graph);
}
MempoolId OpenRegHooks::graphPoolImpl(GraphId graph) const {
  return runtime(HookId::graphPool).graphs().pool(graph);
}

// ---- copies ----

void OpenRegHooks::copyWithHost(HookId hook, void* dst, const void* src,
                                std::size_t bytes, Stream stream, const void* host,
                                const char* host_name) {
  const std::string_view what = hookInfo(hook).name;
  Runtime& rt = runtime(hook);
  // The runtime infers a copy's direction from the pointers: device memory
  // passed as the host side would silently become a device-to-device copy.
  ACCEL_CHECK(!rt.deviceOfAddress(host), InvalidArgument, what, "(): ", host_name, " (",
              host,
              ") is openreg device memory, not host memory; copy between devices "
              "with ",
              hookInfo(HookId::copyDeviceToDevice).name, "()");
  // Pinned host memory may be copied asynchronously; pageable memory is done
  // with when the call returns (hooks.h).
  enqueueCopy(dst, src, bytes, stream, what, /*wait=*/!rt.addresses().isPinned(host));
}

void OpenRegHooks::copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  copyWithHost(HookId::copyHostToDevice, dst, src, bytes, stream, src, "src");
}

void OpenRegHooks::copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  copyWithHost(HookId::copyDeviceToHost, dst, src, bytes, stream, dst, "dst");
}

void OpenRegHooks::copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                          Stream stream) {
  (void)runtime(HookId::copyDeviceToDevice);
  enqueueCopy(dst, src, bytes, stream, hookInfo(HookId::copyDeviceToDevice).name,
              /*wait=*/false);
}

}  // namespace accel::openreg::detail
