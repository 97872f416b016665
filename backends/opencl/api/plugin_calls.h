// Internal to the OpenCL API (the accel_opencl library programs link): the
// plugin registered before anything is asked of it, and a failed Status of
// the plugin's extension interface thrown as the library's error.
//
// Thread-safety: thread-safe.
#pragma once

#include <source_location>
#include <string_view>

#include "accel/plugin_status.h"
#include "accel/stream.h"
#include "extension.h"

namespace accel::opencl::api {

// Registers the plugin (registerBackend) once; cheap after the first call.
void ensureRegistered();

// Throws the library's error for a failed Status, naming `what`.
inline void check(const extension::Status& status, std::string_view what,
                  std::source_location where = std::source_location::current()) {
  throwIfPluginFailed(status, "opencl", what, where);
}

// `stream` as the plugin names it; throws InvalidArgument, naming `what`,
// for a stream of another device type.
[[nodiscard]] accel_stream pluginStream(Stream stream, std::string_view what);

}  // namespace accel::opencl::api
