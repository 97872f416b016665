// The bound on a backend's first discovery (docs/lifecycle.md, "Discovery").
//
// The first isAvailable/deviceCount of each backend runs on a watchdog
// thread and is waited for at most this many seconds. A program that runs
// discovery somewhere else (the `accel` tool runs it in a child process)
// reads the same limit here, so that both agree on what "too long" is.
//
// Thread-safety: thread-safe (reads the environment).
#pragma once

#include "accel/export.h"

namespace accel {

// ACCEL_DISCOVERY_TIMEOUT in seconds (fractions allowed): 30 when it is
// unset or not a positive finite number, at most 1e6 (about 11.6 days; a
// larger value would overflow a steady_clock deadline). Read at each call.
// Never throws.
[[nodiscard]] ACCEL_API double discoveryLimitSeconds() noexcept;

}  // namespace accel
