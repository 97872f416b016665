// A plugin that needs a symbol nothing defines, so dlopen(RTLD_NOW) fails
// and the loader must pass on the dynamic linker's message.
#include "accel/plugin.h"

extern "C" void plugtest_symbol_that_does_not_exist();

namespace {
void registerBackend(accel::Registrar&) { plugtest_symbol_that_does_not_exist(); }
}  // namespace

ACCEL_DEFINE_PLUGIN("plugtest_missing_symbol", "0.0.1", registerBackend);
