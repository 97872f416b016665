#include "accel/stream_guard.h"

#include "accel/hooks_table.h"

namespace accel {

StreamGuard::StreamGuard(Stream stream) : hooks_(&getHooks(stream.device.type())) {
  if (stream.device.index() == kCurrentDevice) {
    stream.device = Device::unchecked(stream.device.type(), hooks_->getCurrentDevice());
  }
  original_device_ = hooks_->exchangeDevice(stream.device.index());
  try {
    original_stream_ = hooks_->exchangeStream(stream);
  } catch (...) {
    // The caller must see the exchangeStream error, not a restore failure.
    hooks_->restoreCurrentDevice(GuardKey(), original_device_,
                                 "StreamGuard (device, after a failed stream switch)");
    throw;
  }
  current_stream_ = stream;
}

StreamGuard::~StreamGuard() {
  hooks_->restoreCurrentStream(GuardKey(), original_stream_, "StreamGuard (stream)");
  hooks_->restoreCurrentDevice(GuardKey(), original_device_, "StreamGuard (device)");
}

}  // namespace accel
