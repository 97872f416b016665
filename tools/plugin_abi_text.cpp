#include "plugin_abi_text.h"

#include "accel/plugin_abi.h"

namespace accel::tool {

std::string abiVersionText(std::uint32_t version) {
  return std::to_string(ACCEL_PLUGIN_ABI_MAJOR_OF(version)) + "." +
         std::to_string(ACCEL_PLUGIN_ABI_MINOR_OF(version));
}

nlohmann::ordered_json coreAbiRangeJson() {
  std::uint32_t oldest = 0;
  std::uint32_t newest = 0;
  accel_core_plugin_abi_range(&oldest, &newest);
  return {{"oldest", abiVersionText(oldest)}, {"newest", abiVersionText(newest)}};
}

nlohmann::ordered_json pluginAbiJson(const PluginRecord& record) {
  // A plugin's entry fills its range before anything can go wrong with the
  // negotiation; all three zero is a file that never got there.
  if (record.abi_newest == 0 && record.abi_oldest == 0 && record.abi_negotiated == 0)
    return nullptr;
  return {{"newest", abiVersionText(record.abi_newest)},
          {"oldest", abiVersionText(record.abi_oldest)},
          {"negotiated",
           record.abi_negotiated == 0
               ? nlohmann::ordered_json(nullptr)
               : nlohmann::ordered_json(abiVersionText(record.abi_negotiated))}};
}

std::string pluginApiPhrase(const nlohmann::ordered_json& abi) {
  if (!abi.is_object()) return {};
  const std::string speaks = "(speaks " + abi["oldest"].get<std::string>() + "\u2013" +
                             abi["newest"].get<std::string>() + ")";
  if (abi["negotiated"].is_null()) return "no plugin API agreed " + speaks;
  return "plugin API " + abi["negotiated"].get<std::string>() + " " + speaks;
}

}  // namespace accel::tool
