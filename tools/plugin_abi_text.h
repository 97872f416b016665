// A plugin's API versions as the accel tool shows them (`accel info`, its
// JSON, `accel check`): the range a plugin (accel/plugin_abi.h) speaks and
// the version it and the core agreed on.
//
// Thread-safety: pure functions. Throw only std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "accel/plugin.h"

namespace accel::tool {

// "1.1": an ACCEL_PLUGIN_ABI_VERSION number as its major.minor.
[[nodiscard]] std::string abiVersionText(std::uint32_t version);

// The C plugin API range the loaded libaccel speaks (accel_core_plugin_abi_range),
// as {"oldest": "1.0", "newest": "1.1"}.
[[nodiscard]] nlohmann::ordered_json coreAbiRangeJson();

// A record's C plugin API versions: {"newest", "oldest", "negotiated"}, each
// "1.1", negotiated null when the two sides agreed on none; null for a
// file that is not a plugin, or whose entry did not say what it speaks.
[[nodiscard]] nlohmann::ordered_json pluginAbiJson(const PluginRecord& record);

// The phrase for a plugin's API, from pluginAbiJson's object: "plugin API
// 1.1 (speaks 1.0–1.1)", "no plugin API agreed (speaks 1.2–1.2)"; empty
// when it is null (a file that did not open, or is no plugin).
[[nodiscard]] std::string pluginApiPhrase(const nlohmann::ordered_json& abi);

}  // namespace accel::tool
