// openreg's settings (accel/openreg/config.h's Config) read from the
// environment or a lookup, inside the plugin; the public parseConfig calls
// this through the extension interface (extension.h).
//
// Thread-safety: as the lookup. Throws InvalidArgument naming the variable,
// its value and what to write instead.
#pragma once

#include "accel/openreg/config.h"

namespace accel::openreg::detail {

[[nodiscard]] Config readConfig(const EnvironmentLookup& lookup);
[[nodiscard]] Config readConfig();

}  // namespace accel::openreg::detail
