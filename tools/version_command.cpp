#include "version_command.h"

#include <iostream>

#include "accel/plugin.h"
#include "accel/version.h"

namespace accel::tool {

int runVersion() {
  std::cout << "accel " << kVersionMajor << '.' << kVersionMinor << '.' << kVersionPatch
            << " (built with plugin API " << kPluginApiVersion << ")\n"
            << "libaccel " << libraryVersion() << " (plugin API "
            << libraryPluginApiVersion() << "; loads plugins built for API "
            << kOldestSupportedPluginApiVersion << " or later that accept API "
            << libraryPluginApiVersion() << ")\n";
  return 0;
}

}  // namespace accel::tool
