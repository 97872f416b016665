// For a backend's own API beside its plugin — a library the program links
// whose functions call functions the plugin exports (openreg's fills,
// kernels and fault injection): a failed status of the plugin's thrown as the
// library's error of its kind, as the core throws a failed hook's, and the
// plugin ABI's handle of a generator.
//
// Thread-safety: thread-safe (the pending message is per thread).
#pragma once

#include <source_location>
#include <string_view>

#include "accel/export.h"
#include "accel/generator.h"
#include "accel/plugin_abi.h"
#include "accel/stream.h"

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

// Throws the library's error for a failed `status` of a plugin's extension
// function (anything with `code` and `message`, as adapter::ExtensionStatus),
// naming `backend` and `what`; returns for a status that is ACCEL_OK.
template <typename Status>
inline void throwIfPluginFailed(
    const Status& status, std::string_view backend, std::string_view what,
    std::source_location where = std::source_location::current()) {
  if (status.code != ACCEL_OK) [[unlikely]]
    throwPluginFailure(status.code, backend, what, status.message, where);
}

// `stream` as a plugin of device type `type` names it. Throws
// InvalidArgument naming `what` for a stream of another device type.
[[nodiscard]] ACCEL_API accel_stream pluginStreamOf(Stream stream, DeviceType type,
                                                    std::string_view what);

// The plugin ABI's handle of `generator`, to pass to a plugin's own
// function: valid while `generator` lives; a plugin that draws from it
// later keeps it with retain_generator. Never throws.
[[nodiscard]] inline accel_generator* pluginGeneratorHandle(
    const Generator& generator) noexcept {
  // The core's handles are its Generator objects (c_plugin_link.cpp reads
  // them back the same way).
  return reinterpret_cast<accel_generator*>(const_cast<Generator*>(&generator));
}

}  // namespace accel
