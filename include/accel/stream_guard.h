// StreamGuard: RAII over the current stream (and device).
//
// Makes the stream's device current and the stream current on it; on scope
// exit restores the stream that was current on that device and the device
// that was current, in that order, also during exception unwinding.
// Destructors never throw (see device_guard.h for why).
//
// Thread-safety: belongs to the creating thread.
#pragma once

#include "accel/device.h"
#include "accel/export.h"
#include "accel/hooks.h"
#include "accel/stream.h"

namespace accel {

class ACCEL_API StreamGuard {
 public:
  // Throws what exchangeDevice/exchangeStream throw (NotSupported for a
  // backend without the streams group).
  explicit StreamGuard(Stream stream);
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  ~StreamGuard();

  [[nodiscard]] Stream originalStream() const noexcept { return original_stream_; }
  [[nodiscard]] Stream currentStream() const noexcept { return current_stream_; }
  [[nodiscard]] Device originalDevice() const noexcept {
    return Device::unchecked(current_stream_.device.type(), original_device_);
  }

 private:
  AcceleratorHooks* hooks_;
  DeviceIndex original_device_;
  Stream original_stream_;
  Stream current_stream_;
};

}  // namespace accel
