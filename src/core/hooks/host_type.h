// Internal: the rule that no backend registers the device type "cpu".
//
// The host is the core's: host memory, pinned-memory lookups, host copies
// and the CPU generator answer for DeviceType::CPU without hooks, and a
// backend behind "cpu" would change what every Device("cpu") means
// (docs/plugins.md). A plugin's Registrar and a program's direct
// registration (accel::registerHooks, registerHooksFactory, a HooksTable of
// its own) refuse it alike.
//
// Thread-safety: thread-safe (no state).
#pragma once

#include <string_view>

#include "accel/device_type.h"

namespace accel::detail {

// Throws InvalidArgument when `type` is the host: `what` (the call) and
// `origin` (who registers) say where it came from.
void refuseHostType(DeviceType type, std::string_view what, std::string_view origin);

}  // namespace accel::detail
