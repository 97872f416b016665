// The process hooks table: the one getHooks() reads. Defined apart from the
// table's code so that the table knows nothing of plugins: the plugin report
// is handed to it here, as its AbsenceExplainer.
#include "accel/hooks_table.h"
#include "plugins/plugin_report.h"

namespace accel::detail {

// Constant-initialised: usable from any static initialiser or destructor.
constinit ProcessHooksTable g_process_hooks{&explainAbsentBackend};

}  // namespace accel::detail
