/* A library built for the retired C++ plugin entry: it exports only that
 * entry's symbol, and not the plugin entry of the C boundary
 * (accel_plugin_negotiate). The loader must refuse it, telling its author to
 * rebuild against the C plugin ABI, and never call it.
 *
 * Built twice: PLUGTEST_ENTRY_V1 exports accel_plugin_entry_v1 (plugin API
 * 1), otherwise it exports accel_plugin_entry_v2 (the C++ entry of plugin
 * API 2 to 4). The struct is the layout those entries returned; its
 * register function aborts, so a loader that calls into the plugin beyond
 * the entry kills the test. */
#include <stdlib.h>

struct plugtest_retired_entry {
  int api_version;
  int min_core_api_version;
  const char* name;
  const char* version;
  void (*register_fn)(void* registrar);
};

static void register_nothing_but_abort(void* registrar) {
  (void)registrar;
  abort();
}

#ifdef PLUGTEST_ENTRY_V1
#define PLUGTEST_RETIRED_ENTRY accel_plugin_entry_v1
#define PLUGTEST_RETIRED_API 1
#else
#define PLUGTEST_RETIRED_ENTRY accel_plugin_entry_v2
#define PLUGTEST_RETIRED_API 3
#endif

__attribute__((visibility("default"))) const struct plugtest_retired_entry*
PLUGTEST_RETIRED_ENTRY(void) {
  static const struct plugtest_retired_entry entry = {
      PLUGTEST_RETIRED_API, PLUGTEST_RETIRED_API, PLUGTEST_TYPE, "0.9.0",
      register_nothing_but_abort};
  return &entry;
}
