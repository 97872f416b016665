// Each frozen plugin API header compiles as C++ on its own (header_compiles.c
// checks C11), as a C++ plugin or the core includes it.
#include "accel/plugin_abi.h"

accel_status abiHeaderCompiles(const accel_core_offer* offer,
                               accel_plugin_answer* answer);
