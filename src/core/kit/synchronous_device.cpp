#include "accel/kit/synchronous_device.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/philox_generator.h"
#include "random/device_fill_host.h"

namespace accel::kit {
namespace {

int checkedDeviceCount(DeviceType type, int count) {
  ACCEL_CHECK(count >= 0 && count <= kMaxDevicesPerType, InvalidArgument,
              "SynchronousDeviceHooks for '", deviceTypeName(type), "': device count ",
              count, " is outside [0, ", kMaxDevicesPerType, "]");
  return count;
}

}  // namespace

struct SynchronousDeviceHooks::Events {
  struct Record {
    DeviceIndex device = 0;
    EventFlags flags;
    bool recorded = false;
    std::chrono::steady_clock::time_point recorded_at;
  };

  // The live event `id`; the mutex is held. Throws InvalidArgument.
  Record& find(EventId id, HookId what, std::string_view backend) {
    auto it = records.find(id);
    ACCEL_CHECK(it != records.end(), InvalidArgument, hookInfo(what).name, "(): event ",
                id, " is not a live event of '", backend, "'; create it with ",
                hookInfo(HookId::createEvent).name, "() and do not use it after ",
                hookInfo(HookId::destroyEvent).name, "()");
    return it->second;
  }

  std::mutex mutex;
  std::unordered_map<EventId, Record> records;
  EventId next = 1;
};

SynchronousDeviceHooks::SynchronousDeviceHooks(DeviceType type, Capabilities capabilities,
                                               int device_count)
    : AcceleratorHooks(type,
                       capabilities.with(HookGroup::Streams).with(HookGroup::Events)),
      device_count_(checkedDeviceCount(type, device_count)),
      addresses_(type),
      default_generators_(type, device_count, [this] { return current_.device(); }),
      used_(
          std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(device_count))),
      next_stream_(std::make_unique<std::atomic<StreamId>[]>(
          static_cast<std::size_t>(device_count))),
      events_(std::make_unique<Events>()) {
  for (int i = 0; i < device_count; ++i)
    next_stream_[i].store(1, std::memory_order_relaxed);
  serveDefaultGeneratorsFrom(default_generators_);
}

SynchronousDeviceHooks::~SynchronousDeviceHooks() = default;

void SynchronousDeviceHooks::onHookCall(HookId) const {}

void SynchronousDeviceHooks::markDeviceUsed(DeviceIndex index) noexcept {
  if (index >= 0 && index < device_count_)
    used_[index].store(true, std::memory_order_release);
}

void SynchronousDeviceHooks::requireKnownStream(Stream stream, HookId what) const {
  const bool known =
      stream.id == kDefaultStreamId ||
      (stream.id > 0 &&
       stream.id < next_stream_[stream.device.index()].load(std::memory_order_acquire));
  ACCEL_CHECK(known, InvalidArgument, hookInfo(what).name, "(): ", stream,
              " was not created by '", name(), "'; use ",
              hookInfo(HookId::getNewStream).name, "() or ",
              hookInfo(HookId::getDefaultStream).name, "()");
}

// ---- low ----

bool SynchronousDeviceHooks::isBuiltImpl() const {
  enter(HookId::isBuilt);
  return true;
}
bool SynchronousDeviceHooks::isAvailableImpl() const {
  enter(HookId::isAvailable);
  return device_count_ > 0;
}
int SynchronousDeviceHooks::deviceCountImpl() const {
  enter(HookId::deviceCount);
  return device_count_;
}
DeviceIndex SynchronousDeviceHooks::getCurrentDeviceImpl() const {
  enter(HookId::getCurrentDevice);
  return current_.device();
}
void SynchronousDeviceHooks::setCurrentDeviceImpl(DeviceIndex index) {
  enter(HookId::setCurrentDevice);
  current_.setDevice(index);
}
DeviceIndex SynchronousDeviceHooks::exchangeDeviceImpl(DeviceIndex index) {
  enter(HookId::exchangeDevice);
  return current_.exchangeDevice(index);
}

// ---- high ----

void SynchronousDeviceHooks::initImpl() {
  enter(HookId::init);  // nothing to start
}

bool SynchronousDeviceHooks::hasPrimaryContextImpl(DeviceIndex index) const {
  enter(HookId::hasPrimaryContext);
  return used_[index].load(std::memory_order_acquire);
}

const Generator& SynchronousDeviceHooks::getDefaultGeneratorImpl(DeviceIndex index) {
  enter(HookId::getDefaultGenerator);
  return default_generators_.get(index);
}

Generator SynchronousDeviceHooks::getNewGeneratorImpl(DeviceIndex index) {
  enter(HookId::getNewGenerator);
  return makePhiloxGenerator(Device(deviceType(), index));
}

Device SynchronousDeviceHooks::getDeviceFromPtrImpl(const void* ptr) const {
  enter(HookId::getDeviceFromPtr);
  return addresses_.deviceOf(ptr);
}

bool SynchronousDeviceHooks::isPinnedPtrImpl(const void* ptr) const {
  enter(HookId::isPinnedPtr);
  return addresses_.isPinned(ptr);
}

// ---- device ----

void SynchronousDeviceHooks::deviceSynchronizeImpl(DeviceIndex) {
  enter(HookId::deviceSynchronize);  // nothing is pending
}

// ---- streams ----

Stream SynchronousDeviceHooks::getCurrentStreamImpl(DeviceIndex index) const {
  enter(HookId::getCurrentStream);
  return Stream(Device(deviceType(), index), current_.stream(index));
}

Stream SynchronousDeviceHooks::getDefaultStreamImpl(DeviceIndex index) const {
  enter(HookId::getDefaultStream);
  return Stream(Device(deviceType(), index), kDefaultStreamId);
}

Stream SynchronousDeviceHooks::getNewStreamImpl(DeviceIndex index, int) {
  enter(HookId::getNewStream);
  markDeviceUsed(index);
  const StreamId id = next_stream_[index].fetch_add(1, std::memory_order_acq_rel);
  return Stream(Device(deviceType(), index), id);
}

void SynchronousDeviceHooks::setCurrentStreamImpl(Stream stream) {
  enter(HookId::setCurrentStream);
  requireKnownStream(stream, HookId::setCurrentStream);
  current_.setStream(stream.device.index(), stream.id);
}

Stream SynchronousDeviceHooks::exchangeStreamImpl(Stream stream) {
  enter(HookId::exchangeStream);
  requireKnownStream(stream, HookId::exchangeStream);
  return Stream(stream.device, current_.exchangeStream(stream.device.index(), stream.id));
}

bool SynchronousDeviceHooks::queryStreamImpl(Stream stream) const {
  enter(HookId::queryStream);
  requireKnownStream(stream, HookId::queryStream);
  return true;  // work finished when the call that enqueued it returned
}

void SynchronousDeviceHooks::synchronizeStreamImpl(Stream stream) const {
  enter(HookId::synchronizeStream);
  requireKnownStream(stream, HookId::synchronizeStream);
}

std::pair<int, int> SynchronousDeviceHooks::streamPriorityRangeImpl() const {
  enter(HookId::streamPriorityRange);
  return {0, 0};
}

// ---- events ----

EventId SynchronousDeviceHooks::createEventImpl(DeviceIndex index, EventFlags flags) {
  enter(HookId::createEvent);
  // Its events live in this process only.
  ACCEL_CHECK(!flags.interprocess, NotSupported, "'", name(), "' does not support ",
              hookInfo(HookId::createEvent).name,
              "() with EventFlags interprocess: its events exist in one process only");
  markDeviceUsed(index);
  std::lock_guard<std::mutex> lock(events_->mutex);
  const EventId id = events_->next++;
  events_->records.emplace(id, Events::Record{index, flags, false, {}});
  return id;
}

void SynchronousDeviceHooks::destroyEventImpl(EventId event) noexcept {
  try {
    enter(HookId::destroyEvent);
  } catch (...) {
    // destroyEvent never fails; a traced failure only reaches onHookCall.
  }
  std::lock_guard<std::mutex> lock(events_->mutex);
  events_->records.erase(event);
}

void SynchronousDeviceHooks::recordEventImpl(EventId event, Stream stream) {
  enter(HookId::recordEvent);
  requireKnownStream(stream, HookId::recordEvent);
  std::lock_guard<std::mutex> lock(events_->mutex);
  Events::Record& record = events_->find(event, HookId::recordEvent, name());
  ACCEL_CHECK(record.device == stream.device.index(), InvalidArgument,
              hookInfo(HookId::recordEvent).name, "(): event ", event,
              " was created on '", name(), ":", int(record.device),
              "' but the stream is ", stream, "; record an event on its own device");
  record.recorded = true;
  record.recorded_at = std::chrono::steady_clock::now();
}

void SynchronousDeviceHooks::blockStreamImpl(EventId event, Stream stream) {
  enter(HookId::blockStream);
  requireKnownStream(stream, HookId::blockStream);
  std::lock_guard<std::mutex> lock(events_->mutex);
  (void)events_->find(event, HookId::blockStream, name());  // the work waited for is done
}

bool SynchronousDeviceHooks::queryEventImpl(EventId event) const {
  enter(HookId::queryEvent);
  std::lock_guard<std::mutex> lock(events_->mutex);
  (void)events_->find(event, HookId::queryEvent, name());
  return true;  // the work before a recorded event has finished
}

void SynchronousDeviceHooks::synchronizeEventImpl(EventId event) const {
  enter(HookId::synchronizeEvent);
  std::lock_guard<std::mutex> lock(events_->mutex);
  (void)events_->find(event, HookId::synchronizeEvent, name());
}

double SynchronousDeviceHooks::elapsedTimeImpl(EventId start, EventId end) const {
  enter(HookId::elapsedTime);
  std::lock_guard<std::mutex> lock(events_->mutex);
  const Events::Record* records[2] = {&events_->find(start, HookId::elapsedTime, name()),
                                      &events_->find(end, HookId::elapsedTime, name())};
  const EventId ids[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    ACCEL_CHECK(records[i]->flags.enable_timing, InvalidArgument,
                hookInfo(HookId::elapsedTime).name, "(): event ", ids[i],
                " was created without enable_timing; create both events with "
                "EventFlags{.enable_timing = true}");
    ACCEL_CHECK(records[i]->recorded, DeviceError, hookInfo(HookId::elapsedTime).name,
                "(): event ", ids[i], " has not been recorded; call ",
                hookInfo(HookId::recordEvent).name, "() on both events first");
  }
  return std::chrono::duration<double, std::milli>(records[1]->recorded_at -
                                                   records[0]->recorded_at)
      .count();
}

// ---- copies ----

void SynchronousDeviceHooks::checkHostSide(HookId hook, const char* which,
                                           const void* ptr) const {
  const std::optional<AddressRange> range = addresses_.find(ptr);
  ACCEL_CHECK(!range || range->kind != MemoryKind::Device, InvalidArgument,
              hookInfo(hook).name, "(): ", which, " (", ptr, ") is device memory of ",
              range ? range->device : Device(deviceType()),
              ", not host memory; copy between devices with ",
              hookInfo(HookId::copyDeviceToDevice).name, "()");
}

void SynchronousDeviceHooks::checkDeviceSide(HookId hook, const char* which,
                                             const void* ptr, std::size_t bytes) const {
  // The core resolved the first and last byte; a subclass that records its
  // memory elsewhere than in the map gets no bounds check here.
  const std::optional<AddressRange> range = addresses_.find(ptr);
  if (!range) return;
  const auto offset = reinterpret_cast<std::uintptr_t>(ptr) - range->begin;
  ACCEL_CHECK(bytes <= range->size - offset, InvalidArgument, hookInfo(hook).name,
              "(): the ", which, " range [", ptr, ", +", bytes,
              ") runs past the end of its allocation on ", range->device, " (",
              range->size - offset, " bytes left from ", ptr, ")");
}

void SynchronousDeviceHooks::checkCopy(HookId hook, void* dst, const void* src,
                                       std::size_t bytes, Stream stream) const {
  requireKnownStream(stream, hook);
  const bool host_dst = hook == HookId::copyDeviceToHost;
  const bool host_src = hook == HookId::copyHostToDevice;
  if (host_dst) {
    checkHostSide(hook, "dst", dst);
  } else {
    checkDeviceSide(hook, "dst", dst, bytes);
  }
  if (host_src) {
    checkHostSide(hook, "src", src);
  } else {
    checkDeviceSide(hook, "src", src, bytes);
  }
}

void SynchronousDeviceHooks::copyHostToDeviceImpl(void* dst, const void* src,
                                                  std::size_t bytes, Stream stream) {
  enter(HookId::copyHostToDevice);
  checkCopy(HookId::copyHostToDevice, dst, src, bytes, stream);
  markDeviceUsed(stream.device.index());
  std::memcpy(dst, src, bytes);
}

void SynchronousDeviceHooks::copyDeviceToHostImpl(void* dst, const void* src,
                                                  std::size_t bytes, Stream stream) {
  enter(HookId::copyDeviceToHost);
  checkCopy(HookId::copyDeviceToHost, dst, src, bytes, stream);
  markDeviceUsed(stream.device.index());
  std::memcpy(dst, src, bytes);
}

void SynchronousDeviceHooks::copyDeviceToDeviceImpl(void* dst, const void* src,
                                                    std::size_t bytes, Stream stream) {
  enter(HookId::copyDeviceToDevice);
  checkCopy(HookId::copyDeviceToDevice, dst, src, bytes, stream);
  markDeviceUsed(stream.device.index());
  std::memcpy(dst, src, bytes);  // the core refused overlapping ranges
}

void SynchronousDeviceHooks::fillRandomImpl(Stream stream, DeviceFill kind, void* data,
                                            std::size_t count, double a, double b,
                                            const Generator& generator) {
  enter(HookId::fillRandom);
  markDeviceUsed(stream.device.index());
  fillHostAddressable(kind, data, count, a, b, generator);
}

void SynchronousDeviceHooks::fillHostAddressable(DeviceFill kind, void* data,
                                                 std::size_t count, double a, double b,
                                                 const Generator& generator) {
  const auto raw = static_cast<std::int32_t>(kind);
  const PhiloxPosition from =
      reservePhilox(generator, detail::philoxOutputsOfFill(raw, count));
  detail::fillHostByKind(raw, data, count, a, b, from);
}

}  // namespace accel::kit
