// Internal: the layers' environment variables, read once (docs/validation.md,
// docs/tracing.md).
//
//  - ACCEL_VALIDATE: unset, empty or 0 off; 1 or log; throw; abort.
//  - ACCEL_TRACE: a file path; unset or empty off. (What the path must be
//    is the tracing layer's to check; here it is only read.)
//
// A malformed value: one line on stderr naming the variable, what it held
// and what it accepts; that layer stays off; nothing else changes.
//
// Thread-safety: layerSettings() is thread-safe (read once, immutable).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "accel/validation.h"

namespace accel::detail {

struct LayerSettings {
  ValidationMode validate = ValidationMode::Off;
  std::string trace_path;  // empty: off
};

// The settings as the environment gives them, parsed on the first call.
// Never throws (no memory: the layers stay off).
[[nodiscard]] const LayerSettings& layerSettings() noexcept;

// What layerSettings() does with one pair of values (for tests): null
// values count as unset. Malformed values are reported to `errors` (one
// line each, naming the variable) and leave that layer off.
[[nodiscard]] LayerSettings parseLayerSettings(const char* validate, const char* trace,
                                               std::string& errors);

// Starts the layers the environment asks for, once per process, before the
// first backend's hooks are installed (the process hooks table calls it
// through layerInstalledHooks). Never throws.
void startEnvironmentLayers() noexcept;

}  // namespace accel::detail
