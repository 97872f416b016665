// Graph and memory-pool identifiers for the graphs hook group.
//
// A graph records the work enqueued on a stream between graphCaptureBegin and
// graphCaptureEnd; after graphInstantiate, graphReplay runs it again.
// Allocations made during capture come from a private pool named by MempoolId,
// which several graphs may share.
//
// Thread-safety: plain values. Capture follows the device's rules (a graph
// captures one stream; CaptureMode says which other threads' calls break it).
#pragma once

#include <compare>
#include <cstdint>

namespace accel {

using GraphId = std::uint64_t;
inline constexpr GraphId kNoGraph = 0;

struct MempoolId {
  std::uint64_t first = 0;   // graph-private pools
  std::uint64_t second = 0;  // user-created pools
  [[nodiscard]] constexpr bool isDefault() const noexcept {
    return first == 0 && second == 0;
  }
  friend constexpr auto operator<=>(const MempoolId&, const MempoolId&) = default;
};

enum class CaptureMode : std::uint8_t {
  Global,       // unsafe calls from any thread invalidate the capture
  ThreadLocal,  // only this thread's unsafe calls do
  Relaxed,      // unsafe calls are not checked
};

}  // namespace accel
