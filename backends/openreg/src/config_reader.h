// openreg's settings (accel/openreg/config.h's Config) read from a lookup of
// environment variables, inside the plugin: the backend's init and probes
// read them from the lookup the plugin entry gave it (the process
// environment); the public parseConfig calls this through the extension
// interface (extension.h).
//
// Thread-safety: as the lookup. Throws InvalidArgument naming the variable,
// its value and what to write instead.
#pragma once

#include "accel/openreg/config.h"

namespace accel::openreg::detail {

[[nodiscard]] Config readConfig(const EnvironmentLookup& lookup);

}  // namespace accel::openreg::detail
