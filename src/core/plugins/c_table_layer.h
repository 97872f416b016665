// Internal: the trampolines that put the table observers (layers/table_layer.h)
// between the core and a C plugin's functions.
//
// Thread-safety: wrapTablesForObservers runs at registration, once per
// backend; the trampolines are thread-safe.
#pragma once

#include "plugins/c_plugin_tables.h"

namespace accel::detail {

// Replaces every function of `tables` (and its ctx pointers) with a
// trampoline calling the observers around the plugin's own function; null
// functions stay null. The originals are kept in a context that lives for
// the process. Throws std::bad_alloc only.
void wrapTablesForObservers(CPluginTables& tables);

}  // namespace accel::detail
