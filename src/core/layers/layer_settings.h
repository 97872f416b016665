// Internal: the layers' environment variables, read once (docs/validation.md,
// docs/tracing.md).
//
//  - ACCEL_VALIDATE: unset, empty or 0 off; 1 or log; throw; abort.
//    ACCEL_VALIDATE_QUARANTINE_BLOCKS / _BYTES bound its quarantine.
//  - ACCEL_TRACE: a file path; unset or empty off. (What the path must be
//    is the tracing layer's to check; here it is only read.)
//
// A malformed value: one line on stderr naming the variable, what it held
// and what it accepts; that layer stays off; nothing else changes.
//
// Thread-safety: layerSettings() is thread-safe (read once, immutable).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "accel/export.h"
#include "accel/validation.h"

namespace accel::detail {

struct LayerSettings {
  ValidationMode validate = ValidationMode::Off;
  // The validation layer's quarantine of freed blocks: at most this many
  // blocks and bytes (ACCEL_VALIDATE_QUARANTINE_BLOCKS, a count, and
  // ACCEL_VALIDATE_QUARANTINE_BYTES, a size as "256MiB"); 0 holds nothing.
  std::size_t quarantine_blocks = 1024;
  std::size_t quarantine_bytes = std::size_t{256} << 20;
  // ACCEL_VALIDATE_STACKS: 0 records no stacks of blocks, events, graphs.
  bool validate_stacks = true;
  std::string trace_path;  // empty: off
};

// The settings as the environment gives them, parsed on the first call.
// Never throws (no memory: the layers stay off).
[[nodiscard]] const LayerSettings& layerSettings() noexcept;

// What layerSettings() does with an environment (for tests): `get` returns
// a variable's value, null when unset. Malformed values are reported to
// `errors` (one line each, naming the variable, what it held and what it
// accepts) and leave that layer off (a malformed quarantine bound keeps
// its default). Throws std::bad_alloc only.
using EnvironmentLookup = std::function<const char*(const char* name)>;
[[nodiscard]] ACCEL_API LayerSettings parseLayerSettings(const EnvironmentLookup& get,
                                                         std::string& errors);

// Starts the layers the environment asks for, once per process, before the
// first backend's hooks are installed (the process hooks table calls it
// through layerInstalledHooks). Never throws.
void startEnvironmentLayers() noexcept;

}  // namespace accel::detail
