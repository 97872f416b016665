// Internal: the return addresses of the calling thread's stack, walked with
// cached unwind rules: the stacks the validation layer records.
//
// libgcc's unwinder (_Unwind_Backtrace) finds each frame's FDE, parses its
// CIE and runs its call-frame program again for every frame of every walk:
// about 150 ns a frame here, 2.3 µs for the validation layer's stack of an
// allocation (docs/validation.md). A frame's rule (where its caller's frame
// and return address are, given its stack and frame pointers) depends on the
// return address alone, so walkFrames works each rule out once, with the
// same call-frame information (found through libgcc's _Unwind_Find_FDE),
// and keeps it in a table by address; a walk of known addresses then costs
// a lookup and a load or two a frame.
//
// The rules it caches are the ones compiled code has almost everywhere on
// x86-64: the caller's frame (CFA) at the stack or frame pointer plus an
// offset, the return address and the saved frame pointer at offsets from
// it. A frame whose rule is anything else (an expression: a signal
// trampoline, a realigned stack; a CIE it cannot read) makes the whole walk
// go through _Unwind_Backtrace instead, as does any platform but x86-64 or
// an unwinder without _Unwind_Find_FDE: the addresses are the same either
// way (tests/memory/frame_walk_test.cpp compares them).
//
// Thread-safety: walkFrames is thread-safe (the table's entries are written
// under a per-entry flag and read with a sequence check).
#pragma once

#include <cstddef>

namespace accel::memory::detail {

// Writes the return addresses of the caller's callers into `frames`,
// innermost first: frames[0] is where walkFrames' caller returns to, as
// _Unwind_GetIP reports it (the address after the call). At most `most`;
// returns how many. Stops at the end of the stack (a frame with no unwind
// information, or whose return address is undefined or 0), as
// _Unwind_Backtrace does. Never throws.
[[nodiscard]] int walkFrames(void** frames, int most) noexcept;

// As walkFrames, always through _Unwind_Backtrace (tests compare the two).
[[nodiscard]] int walkFramesWithUnwinder(void** frames, int most) noexcept;

}  // namespace accel::memory::detail
