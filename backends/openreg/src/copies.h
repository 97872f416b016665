// Internal: the one path by which openreg copies memory on a stream, shared
// by its extension interface (copy, copyAsync) and the copies hook group
// (backend.cpp), so that both check and order copies alike.
//
// Thread-safety: thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "types.h"

namespace accel::openreg::detail {

// Enqueues the copy of `bytes` from `src` to `dst` on `stream`, whose device
// must be one the copy involves; the direction follows from the pointers.
// With `wait`, returns once the copy ran (and refuses a capturing stream,
// which would record the copy instead of running it); otherwise at once.
// `what` names the caller in errors. Throws InvalidArgument for pointers
// that are not what the copy needs, DeviceError for a lost device or work
// that failed.
void enqueueCopy(void* dst, const void* src, std::size_t bytes, Stream stream,
                 std::string_view what, bool wait);

// A synchronous copy on the current stream (the core's) of the device that
// holds src (else dst). Throws as enqueueCopy.
void copyNow(void* dst, const void* src, std::size_t bytes);

}  // namespace accel::openreg::detail
