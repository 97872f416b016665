// The device fills' kinds (accel/device_fill.h, the plugin ABI's ACCEL_FILL_*)
// onto the core's reference host fills (accel/random_fill.h): what the
// plugin services fill_outputs and fill_host serve, what a synchronous
// device's fill writes, and how the fill hook checks a and b.
#pragma once

#include <cstdint>

#include "accel/philox.h"

namespace accel::detail {

// The Philox outputs a fill of `count` elements of `kind` consumes (0 for an
// unknown kind). Never throws.
[[nodiscard]] std::uint64_t philoxOutputsOfFill(std::int32_t kind,
                                                std::uint64_t count) noexcept;

// Writes `count` elements of `kind` to host-addressable `data` from `from`.
// Throws InvalidArgument for an unknown kind or bad a, b (as the fill of
// accel/random_fill.h does; with count 0 it checks them only).
// Thread-safe; concurrent fills must write disjoint memory.
void fillHostByKind(std::int32_t kind, void* data, std::uint64_t count, double a,
                    double b, PhiloxPosition from);

}  // namespace accel::detail
