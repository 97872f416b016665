/* Each frozen plugin API header compiles as C11 on its own (and, through
 * header_compiles.cpp, as C++), as a plugin includes it. */
#include "accel/plugin_abi.h"

/* A declaration that uses what the header declares, so that the file is not
 * empty (an empty translation unit is an error under -pedantic). */
accel_status abi_header_compiles(const accel_core_offer* offer,
                                 accel_plugin_answer* answer);
