// Internal to openreg's API (the accel_openreg library programs link): the
// plugin registered, and initialised by the core, before anything is asked
// of it; and a failed Status of the plugin's extension interface thrown as
// the library's error.
//
// Thread-safety: thread-safe.
#pragma once

#include <source_location>
#include <string_view>

#include "accel/device.h"
#include "accel/hooks.h"
#include "accel/plugin_status.h"
#include "accel/stream.h"
#include "extension.h"

namespace accel::openreg::api {

// Registers the plugin (registerBackend) once, and has the core initialise
// it (AcceleratorHooks::init(): the plugin's one init path, which the
// extension interface relies on and never takes itself). One acquire load
// each after the first call. Throws what registration and init throw
// (InvalidArgument for a malformed ACCEL_OPENREG_* variable; in a fork
// child of a process that started openreg, the core's DeviceError).
AcceleratorHooks& ensureInitialized();

// Throws the library's error for a failed Status, naming `what`.
inline void check(const extension::Status& status, std::string_view what,
                  std::source_location where = std::source_location::current()) {
  throwIfPluginFailed(status, "openreg", what, where);
}

// `stream` as the plugin names it; throws InvalidArgument, naming `what`,
// for a stream of another device type.
[[nodiscard]] accel_stream pluginStream(Stream stream, std::string_view what);

// `index`, or the calling thread's current openreg device for kCurrentDevice.
[[nodiscard]] DeviceIndex resolveDevice(DeviceIndex index);

}  // namespace accel::openreg::api
