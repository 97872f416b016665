#include "device_faults.h"

namespace accel::openreg::detail {

void DeviceFaults::beginOperation(std::string_view what) {
  if (lost()) [[unlikely]]
    throwLost(what);
  std::uint64_t remaining = remaining_.load(std::memory_order_relaxed);
  while (remaining != kNoLimit) {
    if (remaining == 0) {
      lost_.store(true, std::memory_order_release);
      throwLost(what);
    }
    if (remaining_.compare_exchange_weak(remaining, remaining - 1,
                                         std::memory_order_relaxed)) {
      break;
    }
  }
}

void DeviceFaults::checkNotLost(std::string_view what) const {
  if (lost()) [[unlikely]]
    throwLost(what);
}

void DeviceFaults::loseAfter(std::uint64_t operations) noexcept {
  configured_.store(operations, std::memory_order_relaxed);
  remaining_.store(operations, std::memory_order_relaxed);
}

void DeviceFaults::clear() noexcept {
  remaining_.store(kNoLimit, std::memory_order_relaxed);
  configured_.store(kNoLimit, std::memory_order_relaxed);
  lost_.store(false, std::memory_order_release);
}

void DeviceFaults::throwLost(std::string_view what) const {
  const std::uint64_t after = configured_.load(std::memory_order_relaxed);
  throw DeviceError(concat(
      what, ": ", DeviceName{device_}, " is lost (fault injection: lost after ",
      after == kNoLimit ? std::string("a set number of") : std::to_string(after),
      " operations); every later call that reaches it fails and its queued work was "
      "dropped. Handle the error as a device failure; in tests, "
      "accel::openreg::clearFaults() brings the device back"));
}

}  // namespace accel::openreg::detail
