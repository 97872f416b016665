// Internal: the C++ stacks the validation layer records (where a block, an
// event or a graph was made or freed), captured cheaply: they are read only
// when a violation or a leak is reported, which is rare.
//
// A capture walks at most kRecordedFrames return addresses with cached
// unwind rules (memory/frame_walk.h; the unwinder, _Unwind_Backtrace, where
// those do not serve), not the 48 of the memory history's backtrace(): a
// report shows the caller's first frame and, for leaks, the few below it,
// and each frame walked costs (docs/validation.md has the figures). The addresses of a
// call site that records often are the same each time, so they are interned: an identical
// stack seen before is handed out again (one lookup, no allocation, one record shared by
// every block made there). Stacks with a host part (Python) are not interned: the host
// part differs each time. The table keeps at most kInternedStacks (never emptied: a
// record may be in use anywhere); past that each capture gets a record of its own.
//
// Thread-safety: internedStack is thread-safe (sharded locks).
#pragma once

#include <cstddef>
#include <memory>

#include "memory/stack_capture.h"

namespace accel::detail {

inline constexpr int kRecordedFrames = 24;
// About 300 bytes each: at most about 5 MB, held for the life of the process.
inline constexpr std::size_t kInternedStacks = std::size_t{1} << 14;

// The caller's stack (the frames of this function's callers, innermost
// first, at most kRecordedFrames) with `host` (may be null). Throws
// std::bad_alloc.
[[nodiscard]] memory::detail::CapturedStack internedStack(
    std::shared_ptr<const HostStack> host);

// Around fork() (the validation layer's fork callbacks): takes every shard's
// lock of the table, so that a child can record stacks; the other releases
// them. Same thread, in that order. Never throw.
void lockInternedStacksForFork() noexcept;
void unlockInternedStacksAfterFork() noexcept;

}  // namespace accel::detail
