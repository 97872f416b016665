#include "accel/device_guard.h"

#include "accel/error.h"
#include "accel/hooks_table.h"

namespace accel {

DeviceGuard::DeviceGuard(Device device)
    : hooks_(&getHooks(device.type())), type_(device.type()) {
  if (device.index() == kCurrentDevice) {
    original_ = current_ = hooks_->getCurrentDevice();
  } else {
    // The common case is a guard for the device that is already current:
    // that needs neither the range check nor a set.
    original_ = hooks_->getCurrentDevice();
    if (original_ != device.index()) hooks_->setCurrentDevice(device.index());
    current_ = device.index();
  }
}

DeviceGuard::~DeviceGuard() {
  // Compare with the device that is current now, not with current_: code
  // inside the scope may have set another device directly. Reading is
  // cheaper than setting on every backend (restoreCurrentDevice does both).
  hooks_->restoreCurrentDevice(GuardKey(), original_, "DeviceGuard");
}

void DeviceGuard::resetDevice(Device device) {
  ACCEL_CHECK(device.type() == type_, InvalidArgument,
              "DeviceGuard::resetDevice(): the guard is "
              "for '",
              deviceTypeName(type_), "' devices, got '", device,
              "'; use a separate guard per device type");
  if (device.index() == kCurrentDevice) return;
  hooks_->setCurrentDevice(device.index());
  current_ = device.index();
}

OptionalDeviceGuard::OptionalDeviceGuard(std::optional<Device> device) {
  if (device) guard_.emplace(*device);
}

void OptionalDeviceGuard::resetDevice(Device device) {
  if (guard_) {
    guard_->resetDevice(device);
  } else {
    guard_.emplace(device);
  }
}

std::optional<Device> OptionalDeviceGuard::originalDevice() const noexcept {
  if (!guard_) return std::nullopt;
  return guard_->originalDevice();
}

std::optional<Device> OptionalDeviceGuard::currentDevice() const noexcept {
  if (!guard_) return std::nullopt;
  return guard_->currentDevice();
}

}  // namespace accel
