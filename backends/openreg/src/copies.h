// Internal: the one path by which openreg enqueues a copy on a given stream,
// shared by the public copyAsync() (memory.h) and the copies hook group
// (openreg_hooks.cpp), so that both check and order copies alike.
//
// Thread-safety: thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "accel/stream.h"

namespace accel::openreg::detail {

// Enqueues the copy of `bytes` from `src` to `dst` on `stream`, whose device
// must be one the copy involves; the direction follows from the pointers.
// With `wait`, returns once the copy ran (and refuses a capturing stream,
// which would record the copy instead of running it); otherwise at once.
// `what` names the caller in errors. Throws as copyAsync() (memory.h).
void enqueueCopy(void* dst, const void* src, std::size_t bytes, Stream stream,
                 std::string_view what, bool wait);

}  // namespace accel::openreg::detail
