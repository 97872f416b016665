// accel::Error and its subclasses: the one error vocabulary of accelhooks.
//
// Every failure the library reports is an accel::Error (or subclass), so a
// framework can catch one type at its boundary. A message says what was asked,
// what was wrong and what to do about it, and names the backend and hook where
// one is involved. The source location where the error was raised is kept
// separately (location()) and appended to what() so logs point at the code.
// Files of this project are named from the repository root
// ("src/core/hooks/device.cpp"), wherever the checkout lives: the build maps the
// checkout's path away with -fmacro-prefix-map; nothing here edits the path.
//
// Thread-safety: the types are immutable values; safe to share across threads.
#pragma once

#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "accel/export.h"

namespace accel {

class ACCEL_API Error : public std::runtime_error {
 public:
  // `message` is the human-readable text without location; what() returns
  // the message followed by " [file:line]".
  explicit Error(std::string message,
                 std::source_location where = std::source_location::current());
  ~Error() override;

  // The message as given, without the location suffix.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] const std::source_location& location() const noexcept {
    return location_;
  }

 private:
  std::string message_;
  std::source_location location_;
};

// A caller passed a value the API cannot accept (bad device string, index out
// of range, malformed state blob). Retrying with the same input fails again.
class ACCEL_API InvalidArgument : public Error {
 public:
  using Error::Error;
  ~InvalidArgument() override;
};

// The backend does not provide this hook or capability group.
class ACCEL_API NotSupported : public Error {
 public:
  using Error::Error;
  ~NotSupported() override;
};

// No backend is registered for the device type, or it is not usable here
// (no devices, driver missing, poisoned after fork).
class ACCEL_API NotAvailable : public Error {
 public:
  using Error::Error;
  ~NotAvailable() override;
};

// An allocation could not be satisfied.
class ACCEL_API OutOfMemory : public Error {
 public:
  using Error::Error;
  ~OutOfMemory() override;
};

// The device or its runtime failed (device lost, driver error, misuse the
// device itself rejects such as synchronising a capturing stream).
class ACCEL_API DeviceError : public Error {
 public:
  using Error::Error;
  ~DeviceError() override;
};

namespace detail {
// Concatenates streamable parts into one string. Used by ACCEL_CHECK.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  if constexpr (sizeof...(Parts) == 0) {
    return {};
  } else {
    std::ostringstream out;
    (out << ... << parts);
    return std::move(out).str();
  }
}
}  // namespace detail

}  // namespace accel

// ACCEL_CHECK(cond, ErrorType, parts...): throws ErrorType with the parts
// concatenated when `cond` is false. The source location is recorded. A macro
// because the condition must be evaluated lazily and the call site captured.
#define ACCEL_CHECK(cond, ErrorType, ...)                   \
  do {                                                      \
    if (!(cond)) [[unlikely]] {                             \
      throw ErrorType(::accel::detail::concat(__VA_ARGS__), \
                      ::std::source_location::current());   \
    }                                                       \
  } while (false)
