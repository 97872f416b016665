// The plugin's side of openreg's extension interface (extension.h).
#include "extension.h"

#include <limits>
#include <memory>
#include <utility>

#include "accel/adapter/tables.h"
#include "config_reader.h"
#include "openreg_backend.h"
#include "registered_backend.h"

namespace accel::openreg::extension {
namespace {

using detail::DeviceState;
using detail::DeviceTable;
using detail::OpenRegBackend;
using detail::Operation;
using detail::StreamQueue;

// The backend the plugin registered, ready for `what`: the extension's one
// way into the plugin's state. Throws NotAvailable when the plugin is not
// registered with a core or the core has not run its init yet (openreg's API
// asks the core to, first), DeviceError in a fork child.
OpenRegBackend& readyBackend(std::string_view what) {
  OpenRegBackend* backend = detail::registeredBackend();
  ACCEL_ADAPTER_CHECK(
      backend != nullptr, detail::NotAvailable, what,
      ": openreg is not registered with an accelhooks core; call "
      "accel::openreg::registerBackend() or load libaccel_openreg.so as a plugin first");
  backend->forkState().check(what);
  ACCEL_ADAPTER_CHECK(backend->initialized(), detail::NotAvailable, what,
                      ": openreg is not initialised; have the core initialise it "
                      "first (getHooks(openreg).",
                      detail::name(HookId::init),
                      "() or accel::globalContext().lazyInitDevice(openreg), as every "
                      "accel::openreg function does)");
  return *backend;
}

// Runs `body`, turning what it throws into a Status. A refusal of the
// core's keeps its message in the core (the API takes it from there), so
// its Status has none.
template <typename Body>
Status capture(Body&& body) noexcept {
  return adapter::extensionGuard("openreg", std::forward<Body>(body));
}

}  // namespace

Status copy(void* dst, const void* src, std::size_t bytes) noexcept {
  return capture([&] { readyBackend("copy").copies().now(dst, src, bytes); });
}

Status copyAsync(void* dst, const void* src, std::size_t bytes,
                 accel_stream stream) noexcept {
  return capture([&] {
    readyBackend("copyAsync")
        .copies()
        .enqueue(dst, src, bytes, stream, "copyAsync", /*wait=*/false);
  });
}

bool isDevicePointer(const void* ptr) noexcept {
  const OpenRegBackend* backend = detail::registeredBackend();
  return backend != nullptr && backend->initialized() &&
         backend->devices().deviceOfAddress(ptr).has_value();
}

Status launchKernel(accel_stream stream, std::string_view name,
                    std::vector<KernelBuffer> buffers,
                    std::function<void()> body) noexcept {
  return capture([&] {
    const DeviceTable& devices = readyBackend("launchKernel").devices();
    ACCEL_ADAPTER_CHECK(static_cast<bool>(body), detail::InvalidArgument,
                        "launchKernel('", name, "'): the kernel body is empty");
    StreamQueue& queue = devices.queue(stream, "launchKernel");
    DeviceState& device = devices.device(stream.device, "launchKernel");
    Operation operation;
    operation.name = detail::concat("kernel '", name, "'");
    operation.buffers.reserve(buffers.size());
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        ACCEL_ADAPTER_CHECK(buffers[j].name != buffers[i].name, detail::InvalidArgument,
                            "launchKernel('", name, "'): two buffers are named '",
                            buffers[i].name, "'; give each its own name");
      }
      operation.buffers.push_back(devices.resolveOn(
          device, buffers[i].data, buffers[i].bytes,
          detail::concat("launchKernel('", name, "'), buffer '", buffers[i].name, "'")));
    }
    device.faults.beginOperation("launchKernel");
    operation.body = std::move(body);
    queue.enqueue(std::move(operation));
  });
}

Status failNthAllocation(std::uint64_t nth) noexcept {
  return capture(
      [&] { readyBackend("failNthAllocation").devices().failNthAllocation(nth); });
}

Status loseDeviceAfter(std::int8_t device, std::uint64_t operations) noexcept {
  return capture([&] {
    readyBackend("loseDeviceAfter").devices().loseDeviceAfter(device, operations);
  });
}

Status isDeviceLost(std::int8_t device, bool& lost) noexcept {
  return capture([&] {
    lost = readyBackend("isDeviceLost")
               .devices()
               .device(device, "isDeviceLost")
               .faults.lost();
  });
}

Status setStreamLatency(accel_stream stream, std::int64_t microseconds) noexcept {
  return capture([&] {
    ACCEL_ADAPTER_CHECK(microseconds >= 0, detail::InvalidArgument,
                        "setStreamLatency(): the latency of ", detail::StreamName{stream},
                        " must not be negative (", microseconds, " us)");
    readyBackend("setStreamLatency")
        .devices()
        .queue(stream, "setStreamLatency")
        .setLatency(std::chrono::microseconds(microseconds));
  });
}

Status clearFaults() noexcept {
  return capture([&] { readyBackend("clearFaults").devices().clearFaults(); });
}

Status setExecutionUnits(std::int8_t device, int units) noexcept {
  return capture([&] {
    const DeviceTable& devices = readyBackend("setExecutionUnits").devices();
    ACCEL_ADAPTER_CHECK(units >= 1 && units <= kMaxExecutionUnits,
                        detail::InvalidArgument, "setExecutionUnits(): ", units,
                        " units is outside [1, ", kMaxExecutionUnits, "]");
    devices.device(device, "setExecutionUnits").units.setUnits(units);
  });
}

Status executionUnitsState(std::int8_t device, ExecutionUnitsState& state) noexcept {
  return capture([&] {
    state = readyBackend("executionUnitsState")
                .devices()
                .device(device, "executionUnitsState")
                .units.state();
  });
}

Status activeConfig(Config& config) noexcept {
  return capture([&] { config = readyBackend("activeConfig").config(); });
}

Status parseConfig(const EnvironmentLookup& lookup, Config& config) noexcept {
  return capture([&] { config = detail::readConfig(lookup); });
}

}  // namespace accel::openreg::extension
