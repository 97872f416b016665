#include "device_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "accel/adapter/config.h"

namespace accel::openreg::detail {
namespace {

// Between devices: an overrun off the end of one device's range faults in
// the gap instead of landing in the next device.
constexpr std::size_t kGuardBytes = std::size_t{1} << 20;

}  // namespace

DeviceState::DeviceState(DeviceIndex index, std::byte* base, std::size_t capacity,
                         std::size_t page_size, const Config& config)
    : index(index),
      memory(index, base, capacity, page_size),
      units(config.execution_units),
      faults(index) {
  streams.reserve(kStreamsPerDevice);
  for (int id = 0; id < kStreamsPerDevice; ++id) {
    const int priority =
        id == 0 ? 0 : kLowestPriority + (id - 1) / kPoolStreamsPerPriority;
    streams.push_back(std::make_unique<StreamQueue>(
        makeStream(index, id), priority, units, faults, config.stream_latency));
  }
}

void DeviceTable::open(const Config& config) {
  const std::size_t page = systemPageSize();
  const std::size_t capacity = (config.memory_bytes + page - 1) / page * page;
  // Address space beyond the capacity: expandable segments reserve ranges.
  const std::size_t span = capacity * kAddressSpanFactor;
  const std::size_t stride = span + kGuardBytes;
  std::byte* base = nullptr;
  if (config.device_count > 0) {
    const std::size_t total = stride * static_cast<std::size_t>(config.device_count);
    void* range = ::mmap(nullptr, total, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED) {
      const int error = errno;
      throw NotAvailable(concat(
          "openreg ", name(HookId::init), "(): could not reserve ",
          adapter::formatByteSize(total), " of address space for ", config.device_count,
          " devices of ", adapter::formatByteSize(capacity), ": ", std::strerror(error),
          "; lower ACCEL_OPENREG_DEVICES or ACCEL_OPENREG_MEMORY"));
    }
    base = static_cast<std::byte*>(range);
  }
  std::vector<std::unique_ptr<DeviceState>> devices;
  devices.reserve(static_cast<std::size_t>(config.device_count));
  for (int i = 0; i < config.device_count; ++i) {
    devices.push_back(std::make_unique<DeviceState>(
        static_cast<DeviceIndex>(i), base + stride * i, capacity, page, config));
  }
  for (const DeviceLossRule& rule : config.lose_device) {
    devices[static_cast<std::size_t>(rule.device)]->faults.loseAfter(
        rule.after_operations);
  }
  fail_allocation_countdown_.store(config.fail_allocation, std::memory_order_relaxed);
  base_ = base;
  stride_ = stride;
  span_ = span;
  devices_ = std::move(devices);
  initialized_.store(true, std::memory_order_release);
  refreshDiversion();
}

DeviceState& DeviceTable::device(DeviceIndex index, std::string_view what) const {
  fork_.check(what);
  const int devices = count();
  ACCEL_ADAPTER_CHECK(
      index >= 0 && index < devices, InvalidArgument, what, ": device index ", int(index),
      " out of range [0, ", devices, ") for 'openreg'",
      devices == 0 ? std::string("; openreg has no devices (ACCEL_OPENREG_DEVICES=0)")
                   : concat("; use an index from 0 to ", devices - 1));
  DeviceState& state = *devices_[static_cast<std::size_t>(index)];
  if (!state.active.load(std::memory_order_relaxed)) [[unlikely]] {
    state.active.store(true, std::memory_order_relaxed);
    refreshDiversion();
  }
  return state;
}

bool DeviceTable::isActive(DeviceIndex index) const noexcept {
  if (!initialized() || index < 0 || index >= count()) return false;
  return devices_[static_cast<std::size_t>(index)]->active.load(
      std::memory_order_relaxed);
}

std::optional<DeviceIndex> DeviceTable::deviceOfAddress(const void* ptr) const noexcept {
  if (!initialized() || devices_.empty()) return std::nullopt;
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  const auto first = reinterpret_cast<std::uintptr_t>(base_);
  if (address < first) return std::nullopt;
  const std::size_t offset = address - first;
  const std::size_t index = offset / stride_;
  if (index >= devices_.size() || offset % stride_ >= span_) return std::nullopt;
  return static_cast<DeviceIndex>(index);
}

DeviceMemory* DeviceTable::memory(DeviceIndex index) const noexcept {
  if (!initialized() || index < 0 || index >= count()) return nullptr;
  return &devices_[static_cast<std::size_t>(index)]->memory;
}

void DeviceTable::checkAllocation(DeviceIndex index, std::size_t bytes) {
  DeviceState& state = device(index, "allocate");
  if (bytes == 0) return;
  state.faults.beginOperation("allocate");
  if (consumeInjectedAllocationFailure()) {
    refreshDiversion();  // the armed failure is used up
    throw OutOfMemory(
        "fault injection (failNthAllocation / ACCEL_OPENREG_FAIL_ALLOC) made this "
        "allocation fail; later allocations succeed");
  }
}

AllocationRef DeviceTable::resolveOn(DeviceState& device, const void* ptr,
                                     std::size_t bytes, std::string_view what) const {
  std::optional<DeviceIndex> owner = deviceOfAddress(ptr);
  ACCEL_ADAPTER_CHECK(owner.has_value(), InvalidArgument, what, ": ", ptr,
                      " is not openreg device memory; allocate it with ",
                      name(HookId::getDeviceAllocator),
                      "(index).allocate() or accel::openreg::allocate()");
  ACCEL_ADAPTER_CHECK(
      *owner == device.index, InvalidArgument, what, ": ", ptr, " is memory of ",
      DeviceName{*owner}, ", but the work runs on ", DeviceName{device.index},
      "; openreg devices cannot read each other's memory except through copies");
  return device.memory.resolve(core_, ptr, bytes, what);
}

StreamQueue& DeviceTable::queue(Stream stream, std::string_view what) const {
  DeviceState& state = device(stream.device, what);
  ACCEL_ADAPTER_CHECK(stream.id >= 0 && stream.id < kStreamsPerDevice, InvalidArgument,
                      what, ": openreg has no stream with id ", stream.id,
                      " (ids are 0 to ", kStreamsPerDevice - 1, "); get streams from ",
                      name(HookId::getDefaultStream), ", ",
                      name(HookId::getCurrentStream), " or ", name(HookId::getNewStream));
  return *state.streams[static_cast<std::size_t>(stream.id)];
}

StreamQueue& DeviceTable::currentQueue(DeviceIndex index, std::string_view what) const {
  DeviceState& state = device(index, what);
  const StreamId id = core_.currentStream(index);
  ACCEL_ADAPTER_CHECK(id >= 0 && id < kStreamsPerDevice, DeviceError, what,
                      ": the core's current stream of ", DeviceName{index}, " is ", id,
                      ", which openreg never handed out");
  return *state.streams[static_cast<std::size_t>(id)];
}

StreamId DeviceTable::newStream(DeviceIndex index, int priority) const {
  DeviceState& state = device(index, name(HookId::getNewStream));
  const int level = priority - kLowestPriority;
  const unsigned turn = state.next_pool_stream[static_cast<std::size_t>(level)].fetch_add(
      1, std::memory_order_relaxed);
  return static_cast<StreamId>(1 + level * kPoolStreamsPerPriority +
                               static_cast<int>(turn % kPoolStreamsPerPriority));
}

bool DeviceTable::consumeInjectedAllocationFailure() noexcept {
  std::uint64_t countdown = fail_allocation_countdown_.load(std::memory_order_relaxed);
  while (countdown != 0) {
    if (fail_allocation_countdown_.compare_exchange_weak(countdown, countdown - 1,
                                                         std::memory_order_relaxed)) {
      return countdown == 1;
    }
  }
  return false;
}

void DeviceTable::failNthAllocation(std::uint64_t nth) {
  fail_allocation_countdown_.store(nth, std::memory_order_relaxed);
  refreshDiversion();
}

void DeviceTable::loseDeviceAfter(DeviceIndex index, std::uint64_t operations) {
  device(index, "loseDeviceAfter").faults.loseAfter(operations);
  refreshDiversion();
}

void DeviceTable::clearFaults() {
  fail_allocation_countdown_.store(0, std::memory_order_relaxed);
  for (const auto& state : devices_) {
    state->faults.clear();
    for (const auto& stream : state->streams) stream->setLatency({});
  }
  refreshDiversion();
}

void DeviceTable::refreshDiversion() const noexcept {
  if (fork_.inChild() || !initialized()) return;  // a vanished thread may hold the mutex
  std::lock_guard<std::mutex> lock(diversion_mutex_);
  const bool armed = allocationFaultArmed();
  for (const auto& state : devices_) {
    const bool divert =
        armed || !state->active.load(std::memory_order_relaxed) || !state->faults.quiet();
    try {
      core_.divertAllocations(state->index, divert);
    } catch (...) {
      // The core refuses only a backend it does not know, which a registered
      // openreg is not; were it to, allocations would skip openreg's checks
      // (lost devices, injected faults), not fail.
    }
  }
}

}  // namespace accel::openreg::detail
