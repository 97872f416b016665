// Internal: loading one plugin file, shared by loadBackend and autoload.
//
// Thread-safety: thread-safe; loads are serialised.
#pragma once

#include <string>
#include <vector>

#include "accel/plugin.h"

namespace accel::detail {

// Whether a load asks its backends for devices (the NoDevices check). That
// is a discovery: the driver loads and may start threads, after which a
// fork child is refused the backend (docs/lifecycle.md). An explicit
// loadBackend asks; autoload (import accel) does not.
enum class DeviceCheck : bool { Skip, Ask };

// Loads `path` (as loadBackend does, without throwing for a failed load),
// records the attempt with `source` ("loadBackend", "ACCEL_PLUGINS", ...) in
// the report and returns the record. Throws InvalidArgument when called from
// inside a load (a plugin's register_backends or static initialiser).
PluginRecord loadAndRecord(const std::string& path, std::string source,
                           DeviceCheck devices);

// Loads every libaccel_*.so in the ':'-separated `directories` with the same
// trust checks and records as ACCEL_PLUGIN_PATH's scan, recording each with
// `source` (e.g. "libaccel's directory" for the default search). Never throws
// (a failure is a record); does nothing from inside a load.
std::vector<PluginRecord> autoloadDirectories(const std::string& directories,
                                              const std::string& source) noexcept;

// True while this thread runs a plugin load (its static initialisers, entry
// or register_backends). Never throws.
bool isLoadingOnThisThread() noexcept;

}  // namespace accel::detail
