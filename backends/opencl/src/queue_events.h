// QueueEvents: the backend's events (events.h), without timing, as the
// core's caching allocators use them (adapter::StreamEvents): a block freed
// while a queue may still use it is reused only once a marker recorded on
// that queue has completed, and a free segment moves to another stream by a
// barrier instead of staying stranded. The device cache and the pinned cache
// share one.
//
// Thread-safety: thread-safe (events.h).
#pragma once

#include <cstdint>

#include "accel/adapter/backend.h"
#include "types.h"

namespace accel::opencl::detail {

class QueueEvents final : public adapter::StreamEvents {
 public:
  [[nodiscard]] std::uint64_t record(Stream stream) override;
  // A failed command waits for nothing: complete (its error shows on the
  // stream's own calls).
  [[nodiscard]] bool completed(std::uint64_t event) noexcept override;
  void wait(Stream stream, std::uint64_t event) override;
  void release(std::uint64_t event) noexcept override;
  void synchronize(std::uint64_t event) override;
};

}  // namespace accel::opencl::detail
