// CudaStreamEvents: the backend's events (events.h), without timing, as the
// caching allocators use them (adapter::StreamEvents): a block freed while
// a stream may still use it is reused only once an event recorded there has
// completed. Aware of captures (capture_deferrals.h): a record on a
// capturing stream waits for the captures to end, and no event is queried
// while one is underway (CUDA forbids querying an event recorded inside a
// capture, in every capture mode). The device and pinned memories share one.
//
// Thread-safety: thread-safe (events.h, capture_deferrals.h).
#pragma once

#include <cstdint>

#include "accel/adapter/backend.h"

// Hidden like its adapter base, also where the backend's sources are built
// with default visibility (the test build).
#pragma GCC visibility push(hidden)

namespace accel::cuda::detail {

class CudaStreamEvents final : public adapter::StreamEvents {
 public:
  [[nodiscard]] std::uint64_t record(adapter::Stream stream) override;
  // A broken event waits for nothing: complete (its error shows elsewhere).
  [[nodiscard]] bool completed(std::uint64_t event) noexcept override;
  void wait(adapter::Stream stream, std::uint64_t event) override;
  void release(std::uint64_t event) noexcept override;
  void synchronize(std::uint64_t event) override;
};

}  // namespace accel::cuda::detail

#pragma GCC visibility pop
