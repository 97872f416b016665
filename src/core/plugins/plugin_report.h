// Internal: the plugin report, shared by loading and autoload.
//
// Every load attempt is recorded here, in order; the report answers
// pluginReport(), pluginForDeviceType() and explains absent backends to the
// process hooks table (explainAbsentBackend is its AbsenceExplainer, handed
// to the table where the table is defined: the table never includes the
// loader, the loader includes the table).
//
// Thread-safety: every function is thread-safe and takes only the report's
// own lock, never while calling out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "accel/plugin.h"

namespace accel::detail {

// Plugin files are named libaccel_<name>.so: the autoload scan looks for
// that, and an absent type's explanation looks for its own file name.
inline constexpr std::string_view kPluginFilePrefix = "libaccel_";
inline constexpr std::string_view kPluginFileSuffix = ".so";

// Appends `record` to the report.
void recordPluginAttempt(const PluginRecord& record);

// Prints "accelhooks: <message>" on stderr unless `key` was warned about
// before in this process. Never throws.
void warnOnce(const std::string& key, const std::string& message) noexcept;

// "a, b": the names of `types`.
std::string typeList(const std::vector<DeviceType>& types);

// Why no plugin provides `type`: the failed loads that may have, other
// failures, a disabled autoload. Empty when there is nothing to say.
std::string explainAbsentBackend(DeviceType type) noexcept;

}  // namespace accel::detail
