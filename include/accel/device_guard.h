// DeviceGuard and OptionalDeviceGuard: RAII over the current device.
//
// A DeviceGuard makes a device current for the rest of a scope and restores
// the previous device when the scope ends, also while an exception unwinds:
//
//   {
//     accel::DeviceGuard guard(accel::Device::parse("openreg:1"));
//     ...  // work on openreg:1
//   }      // the previous openreg device is current again
//
// OptionalDeviceGuard does nothing until given a device, for code that may or
// may not have one (for example a CPU tensor).
//
// Destructors never throw: a restore that fails (the backend died) is
// reported once on stderr and otherwise ignored, because throwing from a
// destructor during unwinding would terminate the program.
//
// Thread-safety: a guard belongs to the thread that created it (the current
// device is per thread); do not move it to another thread.
#pragma once

#include <optional>

#include "accel/device.h"
#include "accel/export.h"
#include "accel/hooks.h"

namespace accel {

class ACCEL_API DeviceGuard {
 public:
  // Makes `device` current. index -1 keeps the current device (and still
  // restores it on exit). Throws what exchangeDevice throws.
  explicit DeviceGuard(Device device);
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard();

  // Switches to another device of the same type. Throws InvalidArgument for
  // a device of another type.
  void resetDevice(Device device);
  [[nodiscard]] Device originalDevice() const noexcept {
    return Device::unchecked(type_, original_);
  }
  [[nodiscard]] Device currentDevice() const noexcept {
    return Device::unchecked(type_, current_);
  }

 private:
  AcceleratorHooks* hooks_;
  DeviceType type_;
  DeviceIndex original_;
  DeviceIndex current_;
};

class ACCEL_API OptionalDeviceGuard {
 public:
  OptionalDeviceGuard() noexcept = default;
  // Active if `device` has a value. Throws what DeviceGuard's constructor throws.
  explicit OptionalDeviceGuard(std::optional<Device> device);
  OptionalDeviceGuard(const OptionalDeviceGuard&) = delete;
  OptionalDeviceGuard& operator=(const OptionalDeviceGuard&) = delete;
  ~OptionalDeviceGuard() = default;

  // Activates the guard, or switches device if already active (same type).
  // Throws what DeviceGuard's constructor or resetDevice throws.
  void resetDevice(Device device);
  // Restores the original device now and deactivates.
  void reset() noexcept { guard_.reset(); }
  [[nodiscard]] std::optional<Device> originalDevice() const noexcept;
  [[nodiscard]] std::optional<Device> currentDevice() const noexcept;

 private:
  std::optional<DeviceGuard> guard_;
};

}  // namespace accel
