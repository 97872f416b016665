#include "accel/stream.h"

#include <ostream>

#include "accel/error.h"

namespace accel {

Stream Stream::unpack3(std::int64_t stream_id, std::int64_t device_index,
                       std::int64_t device_type) {
  ACCEL_CHECK(
      device_type >= 0 && device_type < kMaxDeviceTypes &&
          isValidDeviceType(static_cast<DeviceType>(device_type)),
      InvalidArgument, "Stream::unpack3: device type id ", device_type,
      " is not a registered device type; the packed values must come from pack3()");
  ACCEL_CHECK(device_index >= kCurrentDevice && device_index < kMaxDevicesPerType,
              InvalidArgument, "Stream::unpack3: device index ", device_index,
              " is out of range [-1, ", kMaxDevicesPerType, ")");
  return Stream(Device(static_cast<DeviceType>(device_type),
                       static_cast<DeviceIndex>(device_index)),
                stream_id);
}

std::ostream& operator<<(std::ostream& out, const Stream& stream) {
  return out << "stream " << stream.id << " on " << stream.device;
}

}  // namespace accel
