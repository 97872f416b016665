// A C++ plugin that lets an exception reach the C boundary, which the plugin
// ABI forbids (statuses cross it, exceptions do not): from its entry, or,
// with ABITEST_THROW_IN_REGISTER, from register_backends. The core must
// catch it, refuse the plugin with the exception's text and keep working.
// Like the C plugin, it links nothing of the core.
#include <stdexcept>

#include "accel/plugin_abi.h"

namespace {

accel_status registerBackends(accel_core* core) {
  (void)core;
  throw std::runtime_error("abitest_throws_in_register: registration threw on purpose");
}

}  // namespace

extern "C" ACCEL_PLUGIN_EXPORT accel_status
accel_plugin_negotiate(const accel_core_offer* offer, accel_plugin_answer* answer) {
#ifdef ABITEST_THROW_IN_REGISTER
  answer->version = offer->newest_version;
  answer->plugin_newest_version = ACCEL_PLUGIN_ABI_CURRENT;
  answer->plugin_oldest_version = ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, 0);
  answer->name = "abitest_throws_in_register";
  answer->version_text = "0.1.0";
  answer->register_backends = registerBackends;
  return ACCEL_OK;
#else
  (void)offer, (void)answer, (void)registerBackends;
  throw std::runtime_error("abitest_throws: the entry threw on purpose");
#endif
}
