// Library and plugin-API versions.
//
// kVersion* follow the project version. kPluginApiVersion changes whenever
// AcceleratorHooks or anything a plugin compiles against changes in a way
// that breaks binary compatibility; the plugin loader refuses a plugin built
// for another value (docs/plugins.md).
#pragma once

#include <string_view>

#include "accel/export.h"

namespace accel {

inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 1;
inline constexpr int kVersionPatch = 0;
inline constexpr int kPluginApiVersion = 4;

// The version of the loaded libaccel.so ("0.1.0"), which may differ from the
// headers a plugin was compiled with.
ACCEL_API std::string_view libraryVersion() noexcept;
// The plugin API version of the loaded libaccel.so.
ACCEL_API int libraryPluginApiVersion() noexcept;

}  // namespace accel
