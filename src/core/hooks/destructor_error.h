// Internal: reporting an error that a noexcept destructor had to swallow.
#pragma once

namespace accel::detail {

// Prints the in-flight exception once per process on stderr, with `where`.
// Call only from inside a catch block. Never throws.
void reportDestructorError(const char* where) noexcept;

}  // namespace accel::detail
