#include "queue_events.h"

#include "events.h"

namespace accel::opencl::detail {

std::uint64_t QueueEvents::record(Stream stream) {
  const EventId event = createEvent(stream.device, 0);
  try {
    recordEvent(event, stream);
  } catch (...) {
    destroyEvent(event);
    throw;
  }
  return event;
}

bool QueueEvents::completed(std::uint64_t event) noexcept {
  try {
    return queryEvent(event);
  } catch (...) {
    return true;
  }
}

void QueueEvents::wait(Stream stream, std::uint64_t event) { blockStream(event, stream); }

void QueueEvents::release(std::uint64_t event) noexcept { destroyEvent(event); }

void QueueEvents::synchronize(std::uint64_t event) { synchronizeEvent(event); }

}  // namespace accel::opencl::detail
