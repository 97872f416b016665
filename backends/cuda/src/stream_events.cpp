#include "stream_events.h"

#include "capture_deferrals.h"
#include "events.h"

namespace accel::cuda::detail {
std::uint64_t CudaStreamEvents::record(adapter::Stream stream) {
  const EventId event = createEvent(stream.device, 0);
  try {
    if (!deferRecord(event, stream)) recordEvent(event, stream);
  } catch (...) {
    destroyEvent(event);
    throw;
  }
  return event;
}

bool CudaStreamEvents::completed(std::uint64_t event) noexcept {
  if (capturesUnderway() || recordDeferred(event)) return false;
  try {
    return queryEvent(event);
  } catch (...) {
    return true;
  }
}

void CudaStreamEvents::wait(adapter::Stream stream, std::uint64_t event) {
  blockStream(event, stream);
}

void CudaStreamEvents::release(std::uint64_t event) noexcept {
  forgetDeferred(event);
  destroyEvent(event);
}

void CudaStreamEvents::synchronize(std::uint64_t event) { synchronizeEvent(event); }

}  // namespace accel::cuda::detail
