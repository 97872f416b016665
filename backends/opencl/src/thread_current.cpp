#include "thread_current.h"

#include <array>

namespace accel::opencl::detail {
namespace {

// Zero-initialised: device 0, every device's default stream (id 0).
constinit thread_local DeviceIndex t_device = 0;
constinit thread_local std::array<StreamId, kMaxDevices> t_streams{};

}  // namespace

DeviceIndex currentDevice() noexcept { return t_device; }
void setCurrentDevice(DeviceIndex device) noexcept { t_device = device; }

StreamId currentStream(DeviceIndex device) noexcept {
  return t_streams[static_cast<std::size_t>(device)];
}
void setCurrentStream(Stream stream) noexcept {
  t_streams[static_cast<std::size_t>(stream.device)] = stream.id;
}

}  // namespace accel::opencl::detail
