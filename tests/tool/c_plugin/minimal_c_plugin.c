/* A backend plugin in plain C over the plugin ABI (accel/plugin_abi.h): the
 * low and high groups, two devices whose memory, and the pinned host memory,
 * come from aligned_alloc.
 * It links nothing of the core; what `accel info`, `accel check` and the
 * Python load report show of a C plugin's API versions is tested with it.
 *
 * Built in variants (tests/tool/CMakeLists.txt):
 *   MINIMAL_C_TYPE    the device type it registers ("minimalc")
 *   MINIMAL_C_OLDEST  the oldest plugin API it speaks (1.0)
 *   MINIMAL_C_NEWEST  the newest (the header's, ACCEL_PLUGIN_ABI_CURRENT)
 */
#include <stdlib.h>
#include <string.h>

#include "accel/plugin_abi.h"

#ifndef MINIMAL_C_TYPE
#define MINIMAL_C_TYPE "minimalc"
#endif
#ifndef MINIMAL_C_OLDEST
#define MINIMAL_C_OLDEST ACCEL_PLUGIN_ABI_VERSION(1, 0)
#endif
#ifndef MINIMAL_C_NEWEST
#define MINIMAL_C_NEWEST ACCEL_PLUGIN_ABI_CURRENT
#endif

enum { kDevices = 2, kAlignment = 256 };

/* The core's services, from the offer (the same table on every call). */
static const accel_core_services* g_services;

static int32_t is_built(void* ctx) {
  (void)ctx;
  return 1;
}
static int32_t is_available(void* ctx) {
  (void)ctx;
  return 1;
}
static int32_t device_count(void* ctx) {
  (void)ctx;
  return kDevices;
}
static accel_status init(void* ctx) {
  (void)ctx;
  return ACCEL_OK;
}

static accel_status allocate_segment(void* ctx, int8_t device, size_t bytes, void** out) {
  (void)ctx;
  (void)device;
  /* aligned_alloc takes a multiple of the alignment. NULL: out of memory. */
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  *out = aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  return ACCEL_OK;
}

static void free_segment(void* ctx, int8_t device, void* data, size_t bytes) {
  (void)ctx;
  (void)device;
  (void)bytes;
  free(data);
}

/* Neither current-device function: the core keeps the current device. */
static const accel_low_fns k_low = {sizeof(accel_low_fns), is_built, is_available,
                                    device_count,          NULL,     NULL,
                                    NULL};
static const accel_high_fns k_high = {sizeof(accel_high_fns), init, NULL};

static accel_status register_backends(accel_core* core) {
  int32_t type = 0;
  accel_status status = g_services->register_device_type(core, MINIMAL_C_TYPE, &type);
  if (status != ACCEL_OK) return status;
  /* Tables may be temporaries: the core copies what it reads. */
  accel_segment_fns memory;
  memset(&memory, 0, sizeof memory);
  memory.struct_size = sizeof memory;
  memory.allocate_segment = allocate_segment;
  memory.free_segment = free_segment;
  accel_backend backend;
  memset(&backend, 0, sizeof backend);
  backend.struct_size = sizeof backend;
  backend.device_type = type;
  backend.groups = ACCEL_GROUP_LOW | ACCEL_GROUP_HIGH;
  backend.low = &k_low;
  backend.high = &k_high;
  backend.device_memory = &memory;
  /* Without it getPinnedMemoryAllocator is NotSupported, which the high
   * group's conformance cases do not accept. */
  backend.pinned_memory = &memory;
  return g_services->register_backend(core, &backend);
}

ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(const accel_core_offer* offer,
                                                        accel_plugin_answer* answer) {
  /* Every struct is read and written only as far as its struct_size holds. */
  if (!ACCEL_ABI_HAS_FIELD(accel_core_offer, offer->struct_size, services) ||
      !ACCEL_ABI_HAS_FIELD(accel_plugin_answer, answer->struct_size, register_backends) ||
      !ACCEL_ABI_HAS_FIELD(accel_core_services, offer->services->struct_size,
                           register_backend))
    return ACCEL_ERROR_VERSION;
  answer->plugin_newest_version = MINIMAL_C_NEWEST;
  answer->plugin_oldest_version = MINIMAL_C_OLDEST;
  answer->name = MINIMAL_C_TYPE;
  answer->version_text = "0.1.0";
  /* The lower of the two newest versions, unless that is below this plugin's floor. */
  uint32_t version =
      offer->newest_version < MINIMAL_C_NEWEST ? offer->newest_version : MINIMAL_C_NEWEST;
  if (version < MINIMAL_C_OLDEST) {
    offer->services->set_error(offer->core, ACCEL_ERROR_VERSION,
                               MINIMAL_C_TYPE
                               " needs a core that speaks its oldest "
                               "plugin API or newer");
    return ACCEL_ERROR_VERSION;
  }
  g_services = offer->services;
  answer->version = version;
  answer->register_backends = register_backends;
  return ACCEL_OK;
}
