#include "version_command.h"

#include <iostream>
#include <sstream>

#include "accel/plugin_abi.h"
#include "accel/version.h"
#include "plugin_abi_text.h"

namespace accel::tool {

std::string versionText() {
  std::ostringstream out;
  // The headers' plugin API, and the range the loaded libaccel.so speaks.
  const nlohmann::ordered_json range = coreAbiRangeJson();
  out << "accel " << kVersionMajor << '.' << kVersionMinor << '.' << kVersionPatch
      << " (built with plugin API " << abiVersionText(ACCEL_PLUGIN_ABI_CURRENT) << ")\n"
      << "libaccel " << libraryVersion() << " (plugin API "
      << range["oldest"].get<std::string>() << "\u2013"
      << range["newest"].get<std::string>() << ")";
  return out.str();
}

int runVersion() {
  std::cout << versionText() << '\n';
  return 0;
}

}  // namespace accel::tool
