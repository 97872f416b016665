#include "openreg_backend.h"

#include <exception>
#include <sstream>

#include "accel/adapter/config.h"
#include "config_reader.h"

namespace accel::openreg::detail {

OpenRegBackend::OpenRegBackend(EnvironmentLookup environment)
    : environment_(std::move(environment)),
      devices_(core(), fork_),
      events_(devices_),
      graphs_(devices_, core()),
      copies_(devices_),
      segments_(devices_, systemPageSize()),
      pinned_(events_) {}

// ---- low and high ----

int OpenRegBackend::probeDeviceCount() const noexcept {
  if (initialized()) return devices_.count();
  std::call_once(probe_once_, [this] {
    try {
      probe_device_count_ = readConfig(environment_).device_count;
    } catch (...) {
      probe_device_count_ = 0;  // init() reports the malformed variable
    }
  });
  return probe_device_count_;
}

bool OpenRegBackend::isAvailable() const { return probeDeviceCount() > 0; }
int OpenRegBackend::deviceCount() const { return probeDeviceCount(); }

void OpenRegBackend::init() {
  std::lock_guard<std::mutex> lock(init_mutex_);
  if (initialized()) return;
  Config config = readConfig(environment_);
  devices_.open(config);
  config_ = std::move(config);
  // A fork from now on leaves a child that must not wait for the workers.
  fork_.markStarted();
  initialized_.store(true, std::memory_order_release);
}

bool OpenRegBackend::hasPrimaryContext(std::int8_t device) const {
  return devices_.isActive(device);
}

adapter::Memory& OpenRegBackend::deviceMemory() { return segments_; }
adapter::Memory& OpenRegBackend::pinnedMemory() { return pinned_; }

// ---- device ----

void OpenRegBackend::synchronizeDevice(std::int8_t index) {
  const std::string_view hook = name(HookId::deviceSynchronize);
  checkNotForkedChild(HookId::deviceSynchronize);
  DeviceState& device = devices_.device(index, hook);
  device.faults.checkNotLost(hook);
  // Every stream is waited for even when one fails, so that the device is
  // idle when this returns; the first error is reported.
  std::exception_ptr first_error;
  for (const auto& stream : device.streams) {
    try {
      stream->synchronizeForDevice(hook);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  device.faults.checkNotLost(hook);
}

std::string OpenRegBackend::showConfig() const {
  checkNotForkedChild(HookId::showConfig);
  const Config& config = config_;
  std::ostringstream out;
  out << "openreg: simulated accelerator (accelhooks reference backend)\n"
      << "  devices:                    " << config.device_count
      << "  (ACCEL_OPENREG_DEVICES)\n"
      << "  memory per device:          " << adapter::formatByteSize(config.memory_bytes)
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
    out << DeviceName{rule.device} << " lost after " << rule.after_operations
        << " operations; ";
    any = true;
  }
  if (config.stream_latency.count() > 0) {
    out << "stream latency " << config.stream_latency.count() << " us; ";
    any = true;
  }
  if (!any) out << "none";
  out << '\n';
  for (int i = 0; i < devices_.count(); ++i) {
    const auto index = static_cast<DeviceIndex>(i);
    if (devices_.isActive(index) &&
        devices_.device(index, name(HookId::showConfig)).faults.lost()) {
      out << "  " << DeviceName{index} << " is lost\n";
    }
  }
  return std::move(out).str();
}

adapter::Properties OpenRegBackend::properties(std::int8_t index) const {
  const std::string_view hook = name(HookId::getDeviceProperties);
  checkNotForkedChild(HookId::getDeviceProperties);
  DeviceState& device = devices_.device(index, hook);
  device.faults.checkNotLost(hook);
  adapter::Properties properties;
  properties.name = "openreg simulated device";
  properties.total_memory_bytes = device.memory.capacity();
  properties.multiprocessor_count = device.units.state().units;
  properties.is_integrated = false;
  properties.uuid = concat("openreg-device-", int(index));
  return properties;
}

// ---- streams ----

std::int64_t OpenRegBackend::defaultStream(std::int8_t /*device*/) {
  checkNotForkedChild(HookId::getDefaultStream);
  return kDefaultStreamId;
}

std::int64_t OpenRegBackend::createStream(std::int8_t device, int priority) {
  checkNotForkedChild(HookId::getNewStream);
  return devices_.newStream(device, priority);
}

bool OpenRegBackend::queryStream(Stream stream) {
  const std::string_view hook = name(HookId::queryStream);
  checkNotForkedChild(HookId::queryStream);
  return devices_.queue(stream, hook).query(hook);
}

void OpenRegBackend::synchronizeStream(Stream stream) {
  const std::string_view hook = name(HookId::synchronizeStream);
  checkNotForkedChild(HookId::synchronizeStream);
  devices_.queue(stream, hook).synchronize(hook);
}

std::pair<int, int> OpenRegBackend::priorityRange(std::int8_t /*device*/) {
  return {kLowestPriority, kGreatestPriority};
}

// ---- events ----

std::uint64_t OpenRegBackend::createEvent(std::int8_t device, std::uint32_t flags) {
  checkNotForkedChild(HookId::createEvent);
  return events_.create(device, EventFlags::fromBits(flags));
}
void OpenRegBackend::destroyEvent(std::uint64_t event) noexcept {
  if (fork_.inChild()) return;  // its lock may belong to a vanished thread
  events_.destroy(event);
}
void OpenRegBackend::recordEvent(std::uint64_t event, Stream stream) {
  checkNotForkedChild(HookId::recordEvent);
  events_.record(event, stream);
}
void OpenRegBackend::blockStream(std::uint64_t event, Stream stream) {
  checkNotForkedChild(HookId::blockStream);
  events_.block(event, stream);
}
bool OpenRegBackend::queryEvent(std::uint64_t event) {
  checkNotForkedChild(HookId::queryEvent);
  return events_.query(event);
}
void OpenRegBackend::synchronizeEvent(std::uint64_t event) {
  checkNotForkedChild(HookId::synchronizeEvent);
  events_.synchronize(event);
}
double OpenRegBackend::elapsedMs(std::uint64_t start, std::uint64_t end) {
  checkNotForkedChild(HookId::elapsedTime);
  return events_.elapsedMilliseconds(start, end);
}

// ---- graphs ----

std::uint64_t OpenRegBackend::createGraph(bool keep_graph) {
  checkNotForkedChild(HookId::graphCreate);
  return graphs_.create(keep_graph);
}
void OpenRegBackend::destroyGraph(std::uint64_t graph) {
  checkNotForkedChild(HookId::graphDestroy);
  graphs_.destroy(graph);
}
void OpenRegBackend::captureBegin(std::uint64_t graph, Stream stream, int mode) {
  checkNotForkedChild(HookId::graphCaptureBegin);
  graphs_.captureBegin(graph, stream, static_cast<CaptureMode>(mode));
}
void OpenRegBackend::captureEnd(std::uint64_t graph) {
  checkNotForkedChild(HookId::graphCaptureEnd);
  graphs_.captureEnd(graph);
}
void OpenRegBackend::instantiateGraph(std::uint64_t graph) {
  checkNotForkedChild(HookId::graphInstantiate);
  graphs_.instantiate(graph);
}
void OpenRegBackend::replayGraph(std::uint64_t graph) {
  checkNotForkedChild(HookId::graphReplay);
  graphs_.replay(graph);
}
void OpenRegBackend::resetGraph(std::uint64_t graph) {
  checkNotForkedChild(HookId::graphReset);
  graphs_.reset(graph);
}

// ---- copies ----

void OpenRegBackend::copyWithHost(HookId hook, void* dst, const void* src,
                                  std::size_t bytes, Stream stream, const void* host,
                                  const char* host_name) {
  const std::string_view what = name(hook);
  checkNotForkedChild(hook);
  // Copies infer a copy's direction from the pointers: device memory
  // passed as the host side would silently become a device-to-device copy.
  ACCEL_ADAPTER_CHECK(!devices_.deviceOfAddress(host), InvalidArgument, what,
                      "(): ", host_name, " (", host,
                      ") is openreg device memory, not host memory; copy between devices "
                      "with ",
                      name(HookId::copyDeviceToDevice), "()");
  // Pinned host memory may be copied asynchronously; pageable memory is done
  // with when the call returns (hooks.h).
  copies_.enqueue(dst, src, bytes, stream, what, /*wait=*/!pinned_.isPinned(host));
}

void OpenRegBackend::copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                                      Stream stream) {
  copyWithHost(HookId::copyHostToDevice, dst, src, bytes, stream, src, "src");
}

void OpenRegBackend::copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                                      Stream stream) {
  copyWithHost(HookId::copyDeviceToHost, dst, src, bytes, stream, dst, "dst");
}

void OpenRegBackend::copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  checkNotForkedChild(HookId::copyDeviceToDevice);
  copies_.enqueue(dst, src, bytes, stream, name(HookId::copyDeviceToDevice),
                  /*wait=*/false);
}

}  // namespace accel::openreg::detail
