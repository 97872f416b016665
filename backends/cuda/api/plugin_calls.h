// Internal to the cuda backend's API (the accel_cuda library programs link):
// a failed Status of the plugin's extension interface thrown as the
// library's error, and streams as the plugin names them.
//
// Thread-safety: thread-safe.
#pragma once

#include <source_location>
#include <string_view>

#include "accel/device.h"
#include "accel/plugin_status.h"
#include "accel/stream.h"
#include "extension.h"

namespace accel::cuda::api {

// Throws the library's error for a failed Status, naming `what`.
inline void check(const extension::Status& status, std::string_view what,
                  std::source_location where = std::source_location::current()) {
  throwIfPluginFailed(status, "cuda", what, where);
}

// `stream` as the plugin names it; throws InvalidArgument, naming `what`,
// for a stream of another device type.
[[nodiscard]] accel_stream pluginStream(Stream stream, std::string_view what);

}  // namespace accel::cuda::api
