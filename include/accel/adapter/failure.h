// The failures a plugin's C++ code throws, and the adapter's check macro.
// Part of the plugin adapter (accel/plugin_adapter.h): compiled into the
// plugin, C++17, nothing of libaccel.so.
//
// A backend function fails by throwing one of these; the adapter catches it
// at the boundary and hands the core its status and message (the core then
// throws the library's error of that kind to the caller: InvalidArgument,
// NotSupported, NotAvailable, OutOfMemory, DeviceError).
//
// Thread-safety: plain values.
#ifndef ACCEL_ADAPTER_FAILURE_H
#define ACCEL_ADAPTER_FAILURE_H

#include <exception>
#include <sstream>
#include <string>
#include <utility>

#include "accel/plugin_abi.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

// Derived from std::exception alone, with the message kept in the plugin's
// own std::string: std::runtime_error's members are defined by the standard
// library itself, and in a process whose program uses another one (a
// libc++ plugin in a libstdc++ program) the dynamic linker may bind them to
// the program's, whose layout differs.
class Failure : public std::exception {
 public:
  // A status of ACCEL_OK is no failure: it becomes ACCEL_ERROR_INTERNAL.
  Failure(accel_status status, std::string message)
      : status_(status == ACCEL_OK ? ACCEL_ERROR_INTERNAL : status),
        message_(std::move(message)) {}
  [[nodiscard]] accel_status status() const noexcept { return status_; }
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 private:
  accel_status status_;
  std::string message_;
};
// A bad index, id, pointer or value.
struct InvalidArgument : Failure {
  explicit InvalidArgument(const std::string& m)
      : Failure(ACCEL_ERROR_INVALID_ARGUMENT, m) {}
};
// The backend cannot do this.
struct NotSupported : Failure {
  explicit NotSupported(const std::string& m) : Failure(ACCEL_ERROR_NOT_SUPPORTED, m) {}
};
// A function of a declared group that the backend has not written: a bug
// in the backend, which the core reports as an unimplemented hook (from a
// core older than plugin API 1.3, as NotSupported).
struct NotImplemented : Failure {
  explicit NotImplemented(const std::string& m)
      : Failure(ACCEL_ERROR_NOT_IMPLEMENTED, m) {}
};
// No driver or device.
struct NotAvailable : Failure {
  explicit NotAvailable(const std::string& m) : Failure(ACCEL_ERROR_NOT_AVAILABLE, m) {}
};
struct OutOfMemory : Failure {
  explicit OutOfMemory(const std::string& m) : Failure(ACCEL_ERROR_OUT_OF_MEMORY, m) {}
};
// The device or its driver failed or refused.
struct DeviceError : Failure {
  explicit DeviceError(const std::string& m) : Failure(ACCEL_ERROR_DEVICE, m) {}
};

// The parts written one after another, as a stream writes them.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return std::move(out).str();
}

}  // namespace accel::adapter

#pragma GCC visibility pop

// ACCEL_ADAPTER_CHECK(condition, FailureType, message parts...): throws
// FailureType(concat(parts...)) unless `condition` holds. A macro so that
// the message is built only on failure.
#define ACCEL_ADAPTER_CHECK(cond, FailureType, ...)             \
  do {                                                          \
    if (!(cond)) {                                              \
      throw FailureType(::accel::adapter::concat(__VA_ARGS__)); \
    }                                                           \
  } while (false)

#endif  // ACCEL_ADAPTER_FAILURE_H
