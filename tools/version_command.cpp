#include "version_command.h"

#include <iostream>
#include <sstream>

#include "accel/plugin.h"
#include "accel/version.h"

namespace accel::tool {

std::string versionText() {
  std::ostringstream out;
  out << "accel " << kVersionMajor << '.' << kVersionMinor << '.' << kVersionPatch
      << " (built with plugin API " << kPluginApiVersion << ")\n"
      << "libaccel " << libraryVersion() << " (plugin API " << libraryPluginApiVersion()
      << "; loads plugins built for API " << kOldestSupportedPluginApiVersion
      << " or later that accept API " << libraryPluginApiVersion() << ")";
  return out.str();
}

int runVersion() {
  std::cout << versionText() << '\n';
  return 0;
}

}  // namespace accel::tool
