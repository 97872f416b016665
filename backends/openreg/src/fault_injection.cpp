#include "accel/openreg/fault_injection.h"

#include "accel/error.h"
#include "runtime.h"

namespace accel::openreg {

void failNthAllocation(std::uint64_t nth) {
  detail::readyRuntime("failNthAllocation").failNthAllocation(nth);
}

void loseDeviceAfter(DeviceIndex index, std::uint64_t operations) {
  detail::readyRuntime("loseDeviceAfter").loseDeviceAfter(index, operations);
}

bool isDeviceLost(DeviceIndex index) {
  return detail::readyRuntime("isDeviceLost").device(index, "isDeviceLost").faults.lost();
}

void setStreamLatency(Stream stream, std::chrono::microseconds latency) {
  ACCEL_CHECK(latency.count() >= 0, InvalidArgument,
              "setStreamLatency(): the latency of ", stream, " must not be negative (",
              latency.count(), " us)");
  detail::readyRuntime("setStreamLatency")
      .queue(stream, "setStreamLatency")
      .setLatency(latency);
}

void clearFaults() { detail::readyRuntime("clearFaults").clearFaults(); }

}  // namespace accel::openreg
