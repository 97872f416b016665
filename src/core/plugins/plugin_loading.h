// Internal: loading one plugin file, shared by loadBackend and autoload.
//
// Thread-safety: thread-safe; loads are serialised.
#pragma once

#include <string>

#include "accel/plugin.h"

namespace accel::detail {

// Loads `path` (as loadBackend does, without throwing for a failed load),
// records the attempt with `source` ("loadBackend", "ACCEL_PLUGINS", ...) in
// the report and returns the record. Throws InvalidArgument when called from
// inside a load (a plugin's register function or static initialiser).
PluginRecord loadAndRecord(const std::string& path, std::string source);

// True while this thread runs a plugin load (its static initialisers, entry
// or register function). Never throws.
bool isLoadingOnThisThread() noexcept;

}  // namespace accel::detail
