// Event identifiers and flags for the events hook group.
//
// An event marks a point in a stream's work. A backend hands out EventIds from
// createEvent and frees them in destroyEvent; 0 is never a valid id.
//
// Thread-safety: plain values; an EventId may be used from any thread, and
// what the hooks do with it is thread-safe (hooks.h).
#pragma once

#include <cstdint>

namespace accel {

using EventId = std::uint64_t;
inline constexpr EventId kNoEvent = 0;

struct EventFlags {
  bool enable_timing = false;  // elapsedTime needs both events created with it
  bool blocking_sync = false;  // synchronize sleeps instead of spinning
  // The event can be shared with another process (CUDA: cudaIpcGetEventHandle).
  // Such events cannot time work: combined with enable_timing it is an
  // InvalidArgument. A backend without cross-process events refuses it with
  // NotSupported naming itself and the flag.
  bool interprocess = false;
};

}  // namespace accel
