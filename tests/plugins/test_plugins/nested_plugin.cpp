// A plugin whose register function, running inside its own load, tries to
// load more: autoload (which returns at once, loading nothing), a load by
// entry through the core's C function accel_core_load_entry (refused), and a
// load by path through accel::loadBackend (refused with InvalidArgument, which
// the adapter hands the core as the register function's failure). None of
// them may wait for the load they run in.
//
// Written on the C++ plugin adapter; unlike the other test plugins it links
// the core, for the loading functions a plugin is not meant to call.
#include <stdexcept>

#include "accel/plugin.h"
#include "accel/plugin_adapter.h"

namespace {

void registerBackend(accel::adapter::Registrar&) {
  if (!accel::autoloadPlugins().empty()) {
    throw std::logic_error("autoload ran inside a load");
  }
  if (accel_core_load_entry(&accel_plugin_negotiate, "plugtest nested entry") ==
      ACCEL_OK) {
    throw std::logic_error("accel_core_load_entry loaded inside a load");
  }
  (void)accel::loadBackend("/nonexistent/libaccel_other.so");
  throw std::logic_error("loadBackend returned inside a load");
}

}  // namespace

ACCEL_DEFINE_PLUGIN_ADAPTER("plugtest_nested", "0.0.1", registerBackend);
