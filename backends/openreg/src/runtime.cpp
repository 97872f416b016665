#include "runtime.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "accel/error.h"
#include "accel/fork.h"
#include "accel/hook_catalogue.h"
#include "accel/openreg/backend.h"
#include "fork_state.h"

namespace accel::openreg::detail {
namespace {

// Between devices: an overrun off the end of one device's range faults in
// the gap instead of landing in the next device.
constexpr std::size_t kGuardBytes = std::size_t{1} << 20;

std::size_t pageSize() noexcept {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// Runs in a fork child right after fork(): atomic stores only. Every device
// allocator sends its requests to Runtime::allocate, which refuses them.
void divertEveryDeviceInChild() noexcept { Runtime::instance().divertEveryDevice(); }

}  // namespace

Runtime& readyRuntime(std::string_view what) {
  checkNotForkedChild(what);
  Runtime& runtime = Runtime::instance();
  if (!runtime.initialized()) [[unlikely]]
    runtime.init();
  return runtime;
}

DataPtr AllocationChecks::allocate(kit::CachingDeviceAllocator& allocator,
                                   std::size_t bytes) {
  return runtime_.allocate(allocator.device().index(), bytes);
}

void AllocationChecks::outOfMemory(const OutOfMemory& error,
                                   const kit::CachingDeviceAllocator& allocator,
                                   std::size_t bytes) {
  runtime_.device(allocator.device().index(), "allocate")
      .memory.throwOutOfMemory(error, bytes);
}

DeviceState::DeviceState(Device device, std::byte* base, std::size_t capacity,
                         std::size_t page_size, const Config& config)
    : device(device),
      memory(device, base, capacity, page_size),
      units(config.execution_units),
      faults(device) {
  streams.reserve(kStreamsPerDevice);
  for (int id = 0; id < kStreamsPerDevice; ++id) {
    const int priority =
        id == 0 ? 0 : kLowestPriority + (id - 1) / kPoolStreamsPerPriority;
    streams.push_back(std::make_unique<StreamQueue>(Stream(device, id), priority, units,
                                                    faults, config.stream_latency));
  }
}

Runtime::Runtime() : addresses_(deviceType()), events_(*this), graphs_(*this) {}

Runtime& Runtime::instance() noexcept {
  static Runtime* runtime = new Runtime();  // never destroyed: see the header
  return *runtime;
}

int Runtime::probeDeviceCount() noexcept {
  if (initialized()) return deviceCount();
  std::call_once(probe_once_, [this] {
    try {
      probe_device_count_ = configFromEnvironment().device_count;
    } catch (...) {
      probe_device_count_ = 0;  // init() reports the malformed variable
    }
  });
  return probe_device_count_;
}

void Runtime::init() {
  std::lock_guard<std::mutex> lock(init_mutex_);
  if (initialized()) return;
  Config config = configFromEnvironment();
  const std::size_t page = pageSize();
  const std::size_t capacity = (config.memory_bytes + page - 1) / page * page;
  // Address space beyond the capacity: expandable segments reserve ranges.
  const std::size_t stride = capacity * kAddressSpanFactor + kGuardBytes;
  std::byte* base = nullptr;
  if (config.device_count > 0) {
    const std::size_t total = stride * static_cast<std::size_t>(config.device_count);
    void* range = ::mmap(nullptr, total, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED) {
      const int error = errno;
      throw NotAvailable(accel::detail::concat(
          "openreg ", hookInfo(HookId::init).name, "(): could not reserve ",
          formatByteSize(total), " of address space for ", config.device_count,
          " devices of ", formatByteSize(capacity), ": ", std::strerror(error),
          "; lower ACCEL_OPENREG_DEVICES or ACCEL_OPENREG_MEMORY"));
    }
    base = static_cast<std::byte*>(range);
  }
  std::vector<std::unique_ptr<DeviceState>> devices;
  devices.reserve(static_cast<std::size_t>(config.device_count));
  const DeviceType type = deviceType();
  for (int i = 0; i < config.device_count; ++i) {
    devices.push_back(
        std::make_unique<DeviceState>(Device(type, static_cast<DeviceIndex>(i)),
                                      base + stride * i, capacity, page, config));
  }
  for (const DeviceLossRule& rule : config.lose_device) {
    devices[static_cast<std::size_t>(rule.device)]->faults.loseAfter(
        rule.after_operations);
  }
  std::vector<DeviceMemory*> memories;
  for (const auto& state : devices) memories.push_back(&state->memory);
  std::unique_ptr<DeviceSegments> segments;
  std::unique_ptr<memory::CachingAllocator> caching_allocator;
  // With no devices the allocator still serves the memory hooks that take no
  // index (emptyCache, history, snapshots); it then has one device that no
  // index check lets anyone allocate on.
  segments = std::make_unique<DeviceSegments>(std::move(memories), page);
  caching_allocator = std::make_unique<memory::CachingAllocator>(
      type, std::max(config.device_count, 1), *segments,
      memory::allocatorSettingsFromEnvironment());
  for (const auto& state : devices) {
    state->memory.attach(*caching_allocator);
    // Diverted until the device is used (refreshDiversion).
    state->allocator.emplace(*caching_allocator, state->device.index(), current_,
                             &allocation_checks_, true);
  }
  fail_allocation_countdown_.store(config.fail_allocation, std::memory_order_relaxed);
  // A device's whole range is its memory for getDeviceFromPtr: openreg
  // resolves single allocations inside it itself (DeviceMemory::resolve).
  for (int i = 0; i < config.device_count; ++i) {
    addresses_.insert(base + stride * i, capacity * kAddressSpanFactor,
                      devices[i]->device, kit::MemoryKind::Device);
  }
  config_ = std::move(config);
  devices_ = std::move(devices);
  segments_ = std::move(segments);
  caching_allocator_ = std::move(caching_allocator);
  installForkHandler();
  // After installForkHandler's: the child's flag is set before the devices
  // divert to the path that reads it.
  registerForkCallbacks({.after_in_child = &divertEveryDeviceInChild});
  initialized_.store(true, std::memory_order_release);
  refreshDiversion();
}

DeviceState& Runtime::device(DeviceIndex index, std::string_view what) {
  checkNotForkedChild(what);
  const int count = deviceCount();
  ACCEL_CHECK(index >= 0 && index < count, InvalidArgument, what, ": device index ",
              int(index), " out of range [0, ", count, ") for 'openreg'",
              count == 0
                  ? std::string("; openreg has no devices (ACCEL_OPENREG_DEVICES=0)")
                  : accel::detail::concat("; use an index from 0 to ", count - 1));
  DeviceState& state = *devices_[static_cast<std::size_t>(index)];
  if (!state.active.load(std::memory_order_relaxed)) [[unlikely]] {
    state.active.store(true, std::memory_order_relaxed);
    refreshDiversion();
  }
  return state;
}

bool Runtime::isActive(DeviceIndex index) const noexcept {
  if (!initialized() || index < 0 || index >= deviceCount()) return false;
  return devices_[static_cast<std::size_t>(index)]->active.load(
      std::memory_order_relaxed);
}

std::optional<DeviceIndex> Runtime::deviceOfAddress(const void* ptr) const noexcept {
  const std::optional<kit::AddressRange> range = addresses_.find(ptr);
  if (!range || range->kind != kit::MemoryKind::Device) return std::nullopt;
  return range->device.index();
}

DataPtr Runtime::allocate(DeviceIndex index, std::size_t bytes) {
  DeviceState& state = device(index, "allocate");
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, state.device);
  state.faults.beginOperation("allocate");
  const StreamId stream = currentStreamId(index);
  if (consumeInjectedAllocationFailure()) {
    refreshDiversion();  // the armed failure is used up
    try {
      state.memory.failAllocation(bytes, stream);
    } catch (const OutOfMemory& e) {
      // The message, not what(): the location stays the error's own.
      throw OutOfMemory(accel::detail::concat(
          e.message(),
          " [fault injection (failNthAllocation / ACCEL_OPENREG_FAIL_ALLOC) made "
          "this allocation fail; later allocations succeed]"));
    }
  }
  return state.memory.allocate(bytes, stream);
}

AllocationRef Runtime::resolveOn(DeviceState& device, const void* ptr, std::size_t bytes,
                                 std::string_view what) {
  std::optional<DeviceIndex> owner = deviceOfAddress(ptr);
  ACCEL_CHECK(owner.has_value(), InvalidArgument, what, ": ", ptr,
              " is not openreg device memory; allocate it with ",
              hookInfo(HookId::getDeviceAllocator).name,
              "(index).allocate() or accel::openreg::allocate()");
  ACCEL_CHECK(*owner == device.device.index(), InvalidArgument, what, ": ", ptr,
              " is memory of ", Device(device.device.type(), *owner),
              ", but the work runs on ", device.device,
              "; openreg devices cannot read each other's memory except through copies");
  return device.memory.resolve(ptr, bytes, what);
}

StreamQueue& Runtime::queue(Stream stream, std::string_view what) {
  ACCEL_CHECK(stream.device.type() == deviceType(), InvalidArgument, what, ": ", stream,
              " is not an openreg stream; pass a stream from getHooks(openreg)");
  DeviceState& state = device(stream.device.index(), what);
  ACCEL_CHECK(stream.id >= 0 && stream.id < kStreamsPerDevice, InvalidArgument, what,
              ": openreg has no stream with id ", stream.id, " (ids are 0 to ",
              kStreamsPerDevice - 1, "); get streams from ",
              hookInfo(HookId::getDefaultStream).name, ", ",
              hookInfo(HookId::getCurrentStream).name, " or ",
              hookInfo(HookId::getNewStream).name);
  return *state.streams[static_cast<std::size_t>(stream.id)];
}

StreamQueue& Runtime::currentQueue(DeviceIndex index, std::string_view what) {
  DeviceState& state = device(index, what);
  return *state.streams[static_cast<std::size_t>(currentStreamId(index))];
}

Stream Runtime::newStream(DeviceIndex index, int priority) {
  DeviceState& state = device(index, hookInfo(HookId::getNewStream).name);
  const int level = priority - kLowestPriority;
  const unsigned turn = state.next_pool_stream[static_cast<std::size_t>(level)].fetch_add(
      1, std::memory_order_relaxed);
  const auto id = static_cast<StreamId>(1 + level * kPoolStreamsPerPriority +
                                        static_cast<int>(turn % kPoolStreamsPerPriority));
  return Stream(state.device, id);
}

bool Runtime::consumeInjectedAllocationFailure() noexcept {
  std::uint64_t countdown = fail_allocation_countdown_.load(std::memory_order_relaxed);
  while (countdown != 0) {
    if (fail_allocation_countdown_.compare_exchange_weak(countdown, countdown - 1,
                                                         std::memory_order_relaxed)) {
      return countdown == 1;
    }
  }
  return false;
}

void Runtime::failNthAllocation(std::uint64_t nth) noexcept {
  fail_allocation_countdown_.store(nth, std::memory_order_relaxed);
  refreshDiversion();
}

void Runtime::loseDeviceAfter(DeviceIndex index, std::uint64_t operations) {
  device(index, "loseDeviceAfter").faults.loseAfter(operations);
  refreshDiversion();
}

void Runtime::clearFaults() noexcept {
  fail_allocation_countdown_.store(0, std::memory_order_relaxed);
  for (const auto& state : devices_) {
    state->faults.clear();
    for (const auto& stream : state->streams) stream->setLatency({});
  }
  refreshDiversion();
}

void Runtime::refreshDiversion() noexcept {
  if (isForkedChild()) return;  // a vanished thread may hold the mutex
  std::lock_guard<std::mutex> lock(diversion_mutex_);
  const bool armed = allocationFaultArmed();
  for (const auto& state : devices_) {
    state->allocator->setDiverted(armed ||
                                  !state->active.load(std::memory_order_relaxed) ||
                                  !state->faults.quiet());
  }
}

void Runtime::divertEveryDevice() noexcept {
  for (const auto& state : devices_) {
    if (state->allocator) state->allocator->setDiverted(true);
  }
}

}  // namespace accel::openreg::detail
