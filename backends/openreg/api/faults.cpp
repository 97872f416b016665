// openreg's fault injection and execution units
// (accel/openreg/fault_injection.h, accel/openreg/execution_units.h).
#include "accel/openreg/execution_units.h"
#include "accel/openreg/fault_injection.h"
#include "plugin_calls.h"

namespace accel::openreg {

void failNthAllocation(std::uint64_t nth) {
  api::ensureInitialized();
  api::check(extension::failNthAllocation(nth), "failNthAllocation");
}

void loseDeviceAfter(DeviceIndex index, std::uint64_t operations) {
  api::ensureInitialized();
  api::check(extension::loseDeviceAfter(index, operations), "loseDeviceAfter");
}

bool isDeviceLost(DeviceIndex index) {
  api::ensureInitialized();
  bool lost = false;
  api::check(extension::isDeviceLost(index, lost), "isDeviceLost");
  return lost;
}

void setStreamLatency(Stream stream, std::chrono::microseconds latency) {
  api::ensureInitialized();
  api::check(extension::setStreamLatency(api::pluginStream(stream, "setStreamLatency"),
                                         latency.count()),
             "setStreamLatency");
}

void clearFaults() {
  api::ensureInitialized();
  api::check(extension::clearFaults(), "clearFaults");
}

void setExecutionUnits(DeviceIndex index, int units) {
  api::ensureInitialized();
  api::check(extension::setExecutionUnits(api::resolveDevice(index), units),
             "setExecutionUnits");
}

ExecutionUnitsState executionUnitsState(DeviceIndex index) {
  api::ensureInitialized();
  ExecutionUnitsState state;
  api::check(extension::executionUnitsState(api::resolveDevice(index), state),
             "executionUnitsState");
  return state;
}

}  // namespace accel::openreg
