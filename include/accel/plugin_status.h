// For a backend's own API beside its plugin — a library the program links
// whose functions call functions the plugin exports (openreg's fills,
// kernels and fault injection): a failed status of the plugin's thrown as the
// library's error of its kind, as the core throws a failed hook's.
//
// Thread-safety: thread-safe (the pending message is per thread).
#pragma once

#include <source_location>
#include <string_view>

#include "accel/export.h"
#include "accel/plugin_abi.h"

namespace accel {

// Throws the library's error for `status` (InvalidArgument, NotSupported,
// NotAvailable, OutOfMemory; DeviceError for any other failure) with
// `message`. With an empty message: the one a core service gave the plugin
// on this thread for this status (a refusal the plugin passed on), or one
// naming `backend`, `function` and the status. `where` is the error's
// location.
[[noreturn]] ACCEL_API void throwPluginFailure(
    accel_status status, std::string_view backend, std::string_view function,
    std::string_view message,
    std::source_location where = std::source_location::current());

}  // namespace accel
