// A plugin whose entry function itself throws (as a constructor of a static
// inside it might): an init failure carrying the exception's text.
#include <stdexcept>

#include "accel/plugin.h"

extern "C" __attribute__((visibility("default"))) const accel::PluginEntry*
ACCEL_PLUGIN_ENTRY() {
  throw std::runtime_error("entry exploded (plugtest)");
}
