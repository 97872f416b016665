// A plugin built for plugin API 1: it exports accel_plugin_entry_v1 with
// API 1's layout (a register function without a Registrar) and no v2 entry.
// The loader must refuse it, telling its author to rebuild.
#include <stdexcept>

namespace {

struct PluginEntryV1 {
  int api_version;
  int min_core_api_version;
  const char* name;
  const char* version;
  void (*register_fn)();
};

void registerBackend() { throw std::logic_error("a v1 register function must not run"); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const PluginEntryV1*
accel_plugin_entry_v1() {
  static const PluginEntryV1 entry{1, 1, "plugtest_v1", "0.9.0", &registerBackend};
  return &entry;
}
