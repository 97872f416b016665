// Internal: the clock the hook layers stamp calls with (HookCall::begin_ticks,
// TableCall::begin_ticks, the trace's events): the memory history's trace
// clock (memory/trace_clock.h), the time-stamp counter on x86-64, read in
// ticks and converted to steady-clock nanoseconds when a trace is collected.
// A tick read costs 9.7 ns on the two-core machine of docs/performance.md,
// steady_clock 24.6 ns, and a traced call reads the clock twice.
//
// Thread-safety: immutable after the library loads; read from any thread.
#pragma once

#include <cstdint>

#include "memory/trace_clock.h"

namespace accel::detail {

// Made when libaccel loads (its base reading then), never destroyed.
extern const memory::detail::TraceClock g_layer_clock;

// Now, in the layer clock's ticks. Never throws.
inline std::int64_t layerNowTicks() noexcept { return g_layer_clock.now(); }

}  // namespace accel::detail
