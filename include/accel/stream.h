// Stream: a (Device, StreamId) pair naming one queue of work on a device.
//
// The id is chosen by the backend; 0 is each device's default stream. A Stream
// is a plain value: holding one keeps nothing alive, and it may be passed
// across threads. pack3()/unpack3() convert to and from three int64 values so
// that a stream can cross a language boundary (Python) exactly.
//
// Thread-safety: trivially copyable value type.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>

#include "accel/device.h"
#include "accel/export.h"

namespace accel {

using StreamId = std::int64_t;
inline constexpr StreamId kDefaultStreamId = 0;

struct StreamData3 {
  std::int64_t stream_id;
  std::int64_t device_index;
  std::int64_t device_type;
  friend constexpr bool operator==(const StreamData3&, const StreamData3&) = default;
};

struct ACCEL_API Stream {
  Device device;
  StreamId id = kDefaultStreamId;

  constexpr Stream() = default;
  constexpr Stream(Device device, StreamId id) : device(device), id(id) {}

  [[nodiscard]] constexpr StreamData3 pack3() const noexcept {
    return {id, device.index(), static_cast<std::int64_t>(device.type())};
  }
  // Inverse of pack3(). Throws InvalidArgument if the device type is not a
  // known type or the index is outside [-1, kMaxDevicesPerType).
  static Stream unpack3(std::int64_t stream_id, std::int64_t device_index,
                        std::int64_t device_type);
  static Stream unpack3(const StreamData3& data) {
    return unpack3(data.stream_id, data.device_index, data.device_type);
  }

  friend constexpr bool operator==(const Stream&, const Stream&) = default;
};

ACCEL_API std::ostream& operator<<(std::ostream& out, const Stream& stream);

}  // namespace accel

template <>
struct std::hash<accel::Stream> {
  std::size_t operator()(const accel::Stream& s) const noexcept {
    return std::hash<accel::Device>{}(s.device) ^
           (std::hash<std::int64_t>{}(s.id) * 0x9E3779B97F4A7C15ull);
  }
};
