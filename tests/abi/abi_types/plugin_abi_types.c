/* The plugin ABI's C types as debugging information: a library whose
 * exported functions take every type of accel/plugin_abi.h, built with -g,
 * so that abidw (libabigail) can write the ABI of the boundary and abidiff
 * compare it with tests/abi/baseline/plugin_abi.abi. The core itself is
 * built without type information in its release build, and carries C++
 * besides: this library captures exactly the C boundary, whichever build.
 * Every struct the boundary passes is reachable from these parameters (the
 * tables through accel_backend, the services through the offer). The
 * macros (versions, statuses, group bits) are not types: the frozen
 * headers and plugin_abi_test.cpp keep those. */
#include "accel/plugin_abi.h"

#define ABI_TYPES_EXPORT __attribute__((visibility("default")))

ABI_TYPES_EXPORT void abi_types_entry(accel_plugin_negotiate_fn entry,
                                      const accel_core_offer* offer,
                                      accel_plugin_answer* answer) {
  (void)entry, (void)offer, (void)answer;
}

ABI_TYPES_EXPORT void abi_types_backend(const accel_backend* backend,
                                        accel_device_properties* properties,
                                        accel_mempool pool, accel_stream stream) {
  (void)backend, (void)properties, (void)pool, (void)stream;
}

/* The two functions the core exports in C, by the header's own declarations. */
ABI_TYPES_EXPORT void abi_types_core_exports(
    __typeof__(&accel_core_plugin_abi_range) range,
    __typeof__(&accel_core_load_entry) load) {
  (void)range, (void)load;
}
