// DeviceFaults: the injected-failure state of one simulated device: whether it
// is lost, and how many operations it has left before it will be.
//
// See accel/openreg/fault_injection.h for what counts as an operation and
// what "lost" means to callers. Workers consult lost() before each operation
// to drop the work queued on a lost device.
//
// Thread-safety: all members are thread-safe (atomics; the count is
// decremented with compare-and-swap so that concurrent submitters use up
// exactly N operations between them).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>

#include "types.h"

namespace accel::openreg::detail {

class DeviceFaults {
 public:
  explicit DeviceFaults(DeviceIndex device) noexcept : device_(device) {}

  // Counts one operation. Throws DeviceError, naming `what`, if the device is
  // lost or this operation is the one that loses it.
  void beginOperation(std::string_view what);
  // Throws DeviceError, naming `what`, if the device is lost.
  void checkNotLost(std::string_view what) const;
  [[nodiscard]] bool lost() const noexcept {
    return lost_.load(std::memory_order_acquire);
  }
  // Not lost, and no loss armed: beginOperation would do nothing. A fast
  // path's check; never throws.
  [[nodiscard]] bool quiet() const noexcept {
    return remaining_.load(std::memory_order_relaxed) == kNoLimit &&
           !lost_.load(std::memory_order_relaxed);
  }

  // The device is lost after `operations` more operations.
  void loseAfter(std::uint64_t operations) noexcept;
  // No limit, not lost.
  void clear() noexcept;

 private:
  static constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();

  [[noreturn]] void throwLost(std::string_view what) const;

  DeviceIndex device_;
  std::atomic<bool> lost_{false};
  std::atomic<std::uint64_t> remaining_{kNoLimit};
  std::atomic<std::uint64_t> configured_{kNoLimit};  // for the message
};

}  // namespace accel::openreg::detail
