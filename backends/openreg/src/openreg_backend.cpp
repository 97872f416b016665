#include "openreg_backend.h"

#include <exception>
#include <sstream>

#include "accel/adapter/config.h"
#include "copies.h"
#include "fork_state.h"
#include "runtime.h"

namespace accel::openreg::detail {

OpenRegBackend::OpenRegBackend() = default;

// The core ran init (so the runtime is initialised) before any function
// that needs the runtime; only the fork check is left per call.
Runtime& OpenRegBackend::runtime(HookId hook) const {
  checkNotForkedChild(name(hook));
  return Runtime::instance();
}

// ---- low and high ----

bool OpenRegBackend::isAvailable() const {
  return Runtime::instance().probeDeviceCount() > 0;
}
int OpenRegBackend::deviceCount() const { return Runtime::instance().probeDeviceCount(); }

void OpenRegBackend::init() { Runtime::instance().init(); }

bool OpenRegBackend::hasPrimaryContext(std::int8_t device) const {
  return Runtime::instance().isActive(device);
}

adapter::Memory& OpenRegBackend::deviceMemory() { return Runtime::instance().segments(); }
adapter::Memory& OpenRegBackend::pinnedMemory() { return Runtime::instance().pinned(); }

// ---- device ----

void OpenRegBackend::synchronizeDevice(std::int8_t index) {
  const std::string_view hook = name(HookId::deviceSynchronize);
  DeviceState& device = runtime(HookId::deviceSynchronize).device(index, hook);
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
  Runtime& rt = runtime(HookId::showConfig);
  const Config& config = rt.config();
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
  for (int i = 0; i < rt.deviceCount(); ++i) {
    const auto index = static_cast<DeviceIndex>(i);
    if (rt.isActive(index) && rt.device(index, name(HookId::showConfig)).faults.lost()) {
      out << "  " << DeviceName{index} << " is lost\n";
    }
  }
  return std::move(out).str();
}

adapter::Properties OpenRegBackend::properties(std::int8_t index) const {
  const std::string_view hook = name(HookId::getDeviceProperties);
  DeviceState& device = runtime(HookId::getDeviceProperties).device(index, hook);
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
  (void)runtime(HookId::getDefaultStream);
  return kDefaultStreamId;
}

std::int64_t OpenRegBackend::createStream(std::int8_t device, int priority) {
  return runtime(HookId::getNewStream).newStream(device, priority);
}

bool OpenRegBackend::queryStream(Stream stream) {
  const std::string_view hook = name(HookId::queryStream);
  return runtime(HookId::queryStream).queue(stream, hook).query(hook);
}

void OpenRegBackend::synchronizeStream(Stream stream) {
  const std::string_view hook = name(HookId::synchronizeStream);
  runtime(HookId::synchronizeStream).queue(stream, hook).synchronize(hook);
}

std::pair<int, int> OpenRegBackend::priorityRange(std::int8_t /*device*/) {
  return {kLowestPriority, kGreatestPriority};
}

// ---- events ----

std::uint64_t OpenRegBackend::createEvent(std::int8_t device, std::uint32_t flags) {
  return runtime(HookId::createEvent)
      .events()
      .create(device, EventFlags::fromBits(flags));
}
void OpenRegBackend::destroyEvent(std::uint64_t event) noexcept {
  if (isForkedChild()) return;  // its lock may belong to a vanished thread
  Runtime::instance().events().destroy(event);
}
void OpenRegBackend::recordEvent(std::uint64_t event, Stream stream) {
  runtime(HookId::recordEvent).events().record(event, stream);
}
void OpenRegBackend::blockStream(std::uint64_t event, Stream stream) {
  runtime(HookId::blockStream).events().block(event, stream);
}
bool OpenRegBackend::queryEvent(std::uint64_t event) {
  return runtime(HookId::queryEvent).events().query(event);
}
void OpenRegBackend::synchronizeEvent(std::uint64_t event) {
  runtime(HookId::synchronizeEvent).events().synchronize(event);
}
double OpenRegBackend::elapsedMs(std::uint64_t start, std::uint64_t end) {
  return runtime(HookId::elapsedTime).events().elapsedMilliseconds(start, end);
}

// ---- graphs ----

std::uint64_t OpenRegBackend::createGraph(bool keep_graph) {
  return runtime(HookId::graphCreate).graphs().create(keep_graph);
}
void OpenRegBackend::destroyGraph(std::uint64_t graph) {
  runtime(HookId::graphDestroy).graphs().destroy(graph);
}
void OpenRegBackend::captureBegin(std::uint64_t graph, Stream stream, int mode) {
  runtime(HookId::graphCaptureBegin)
      .graphs()
      .captureBegin(graph, stream, static_cast<CaptureMode>(mode));
}
void OpenRegBackend::captureEnd(std::uint64_t graph) {
  runtime(HookId::graphCaptureEnd).graphs().captureEnd(graph);
}
void OpenRegBackend::instantiateGraph(std::uint64_t graph) {
  runtime(HookId::graphInstantiate).graphs().instantiate(graph);
}
void OpenRegBackend::replayGraph(std::uint64_t graph) {
  runtime(HookId::graphReplay).graphs().replay(graph);
}
void OpenRegBackend::resetGraph(std::uint64_t graph) {
  runtime(HookId::graphReset).graphs().reset(graph);
}

// ---- copies ----

void OpenRegBackend::copyWithHost(HookId hook, void* dst, const void* src,
                                  std::size_t bytes, Stream stream, const void* host,
                                  const char* host_name) {
  const std::string_view what = name(hook);
  Runtime& rt = runtime(hook);
  // The runtime infers a copy's direction from the pointers: device memory
  // passed as the host side would silently become a device-to-device copy.
  ACCEL_ADAPTER_CHECK(!rt.deviceOfAddress(host), InvalidArgument, what, "(): ", host_name,
                      " (", host,
                      ") is openreg device memory, not host memory; copy between devices "
                      "with ",
                      name(HookId::copyDeviceToDevice), "()");
  // Pinned host memory may be copied asynchronously; pageable memory is done
  // with when the call returns (hooks.h).
  enqueueCopy(dst, src, bytes, stream, what, /*wait=*/!rt.pinned().isPinned(host));
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
  (void)runtime(HookId::copyDeviceToDevice);
  enqueueCopy(dst, src, bytes, stream, name(HookId::copyDeviceToDevice), /*wait=*/false);
}

}  // namespace accel::openreg::detail
