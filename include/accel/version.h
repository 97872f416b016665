// Library version.
//
// kVersion* follow the project version. A plugin's compatibility with the
// core is not a number here: the C plugin ABI negotiates it
// (accel/plugin_abi.h: ACCEL_PLUGIN_ABI_CURRENT, accel_core_plugin_abi_range,
// docs/plugin-abi.md).
#pragma once

#include <string_view>

#include "accel/export.h"

namespace accel {

inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 1;
inline constexpr int kVersionPatch = 0;

// The version of the loaded libaccel.so ("0.1.0"), which may differ from the
// headers a program was compiled with. Never throws.
ACCEL_API std::string_view libraryVersion() noexcept;

}  // namespace accel
