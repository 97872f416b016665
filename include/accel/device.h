// Device: a (DeviceType, DeviceIndex) pair, the address of one device.
//
// Text form: "type" or "type:index", e.g. "openreg:1", "cuda", "cpu:0". The
// index is decimal, 0 to kMaxDevicesPerType - 1; no sign, no spaces, no
// leading '+'. A missing index means "the current device of that type"
// (index -1). Parsing is strict: anything else is an InvalidArgument that
// shows the input and the expected form.
//
// Thread-safety: Device is a trivially copyable value type.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "accel/device_type.h"
#include "accel/export.h"

namespace accel {

// Index of a device within its type; -1 means "the current device".
using DeviceIndex = std::int8_t;
inline constexpr DeviceIndex kCurrentDevice = -1;
// Indices run from 0 to kMaxDevicesPerType - 1.
inline constexpr int kMaxDevicesPerType = 128;

class ACCEL_API Device {
 public:
  // The CPU, index -1.
  constexpr Device() = default;
  // Throws InvalidArgument if index is below -1.
  Device(DeviceType type, DeviceIndex index = kCurrentDevice);

  // For indices already known to be valid (-1 or above), e.g. ones a backend
  // returned: no check, so it cannot throw.
  static constexpr Device unchecked(DeviceType type, DeviceIndex index) noexcept {
    Device device;
    device.type_ = type;
    device.index_ = index;
    return device;
  }

  // Parses "type" or "type:index". Throws InvalidArgument on malformed text,
  // an unknown type name, or an index outside [0, kMaxDevicesPerType).
  static Device parse(std::string_view text);

  [[nodiscard]] constexpr DeviceType type() const noexcept { return type_; }
  // -1 for "the current device of this type".
  [[nodiscard]] constexpr DeviceIndex index() const noexcept { return index_; }
  [[nodiscard]] constexpr bool hasIndex() const noexcept { return index_ >= 0; }
  [[nodiscard]] constexpr bool isCpu() const noexcept { return type_ == DeviceType::CPU; }
  // "openreg:1", or "openreg" when the index is -1.
  [[nodiscard]] std::string str() const;

  friend constexpr bool operator==(const Device&, const Device&) = default;

 private:
  // Private so that every Device passed the constructor's check: an index
  // below -1 cannot be assigned after construction.
  DeviceType type_ = DeviceType::CPU;
  DeviceIndex index_ = kCurrentDevice;
};

ACCEL_API std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace accel

template <>
struct std::hash<accel::Device> {
  std::size_t operator()(const accel::Device& d) const noexcept {
    return (static_cast<std::size_t>(d.type()) << 8) |
           static_cast<std::uint8_t>(d.index());
  }
};
