/* The loader tests' plugin: a backend plugin in plain C11 against the plugin
 * ABI alone (accel/plugin_abi.h), built once per way a load can go (right or
 * wrong) with one -D switch each (tests/plugins/CMakeLists.txt). It links
 * nothing of the core. Its backend is the smallest the core accepts: the low
 * and high groups over PLUGTEST_DEVICES pretend devices whose memory, and the
 * pinned host memory, come from aligned_alloc; the core keeps the current
 * device per thread.
 *
 * Switches:
 *  PLUGTEST_TYPE "name"     its name and the device type it registers
 *  PLUGTEST_DEVICES n       the device count (default 2)
 *  PLUGTEST_OLDEST v        the oldest plugin API it speaks (default 1.0)
 *  PLUGTEST_NEWEST v        the newest (default: the header's)
 *  PLUGTEST_IDEMPOTENT      registers only the first time register_backends
 *                           runs (a backend a program may also link and
 *                           register itself, openreg's kind)
 *  PLUGTEST_WAIT            having registered, waits in register_backends
 *                           until the test calls plugtest_release() (at most
 *                           a minute), so that another thread's registration
 *                           falls inside the load
 *  PLUGTEST_FAILS "text"    register_backends fails (no driver) with the text
 *  PLUGTEST_REGISTERS_NOTHING  register_backends returns ACCEL_OK having
 *                           registered nothing
 *  PLUGTEST_SECOND_TYPE     also registers PLUGTEST_TYPE "_second"
 *  PLUGTEST_TWICE           registers PLUGTEST_TYPE, then its backend again
 *  PLUGTEST_MISSING_SYMBOL  calls a function nothing defines (dlopen with
 *                           RTLD_NOW fails naming it) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in strict C11 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accel/plugin_abi.h"

#ifndef PLUGTEST_DEVICES
#define PLUGTEST_DEVICES 2
#endif
#ifndef PLUGTEST_OLDEST
#define PLUGTEST_OLDEST ACCEL_PLUGIN_ABI_VERSION(1, 0)
#endif
#ifndef PLUGTEST_NEWEST
#define PLUGTEST_NEWEST ACCEL_PLUGIN_ABI_CURRENT
#endif

enum { kAlignment = 256 };

/* The core's services, from the offer (the same table on every call). */
static const accel_core_services* g_services;

static int32_t is_built(void* ctx) {
  (void)ctx;
  return 1;
}
static int32_t is_available(void* ctx) {
  (void)ctx;
  return PLUGTEST_DEVICES > 0;
}
static int32_t device_count(void* ctx) {
  (void)ctx;
  return PLUGTEST_DEVICES;
}
static accel_status init(void* ctx) {
  (void)ctx;
  return ACCEL_OK;
}

static accel_status allocate_segment(void* ctx, int8_t device, size_t bytes, void** out) {
  (void)ctx;
  (void)device;
  /* aligned_alloc takes a multiple of the alignment; NULL: out of memory. */
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

/* Registers `type_name` and its backend; the core's status (its message is
 * pending with the core) on a refusal. Unused by the variants that fail
 * before registering. */
__attribute__((unused)) static accel_status register_backend_of(accel_core* core,
                                                                const char* type_name) {
  int32_t type = 0;
  accel_status status = g_services->register_device_type(core, type_name, &type);
  if (status != ACCEL_OK) return status;
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
  backend.pinned_memory = &memory;
  return g_services->register_backend(core, &backend);
}

#ifdef PLUGTEST_WAIT
static pthread_mutex_t g_release_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_release_cond = PTHREAD_COND_INITIALIZER;
static int g_released;

/* Lets register_backends return (called by the test). */
ACCEL_PLUGIN_EXPORT void plugtest_release(void) {
  pthread_mutex_lock(&g_release_mutex);
  g_released = 1;
  pthread_cond_broadcast(&g_release_cond);
  pthread_mutex_unlock(&g_release_mutex);
}

static void wait_for_release(void) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 60;
  pthread_mutex_lock(&g_release_mutex);
  while (!g_released) {
    if (pthread_cond_timedwait(&g_release_cond, &g_release_mutex, &deadline) != 0) break;
  }
  pthread_mutex_unlock(&g_release_mutex);
}
#endif

#ifdef PLUGTEST_MISSING_SYMBOL
void plugtest_symbol_that_does_not_exist(void);
#endif

static accel_status register_backends(accel_core* core) {
#ifdef PLUGTEST_MISSING_SYMBOL
  plugtest_symbol_that_does_not_exist();
#endif
#if defined(PLUGTEST_FAILS)
  g_services->set_error(core, ACCEL_ERROR_NOT_AVAILABLE, PLUGTEST_FAILS);
  return ACCEL_ERROR_NOT_AVAILABLE;
#elif defined(PLUGTEST_REGISTERS_NOTHING)
  (void)core;
  return ACCEL_OK;
#else
#ifdef PLUGTEST_IDEMPOTENT
  static int registered_before;
  if (registered_before) return ACCEL_OK;
  registered_before = 1;
#endif
  accel_status status = register_backend_of(core, PLUGTEST_TYPE);
#ifdef PLUGTEST_SECOND_TYPE
  if (status == ACCEL_OK) status = register_backend_of(core, PLUGTEST_TYPE "_second");
#endif
#ifdef PLUGTEST_TWICE
  if (status == ACCEL_OK) status = register_backend_of(core, PLUGTEST_TYPE);
#endif
#ifdef PLUGTEST_WAIT
  wait_for_release();
#endif
  return status;
#endif
}

ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(const accel_core_offer* offer,
                                                        accel_plugin_answer* answer) {
  /* Every struct is read and written only as far as its struct_size holds. */
  if (!ACCEL_ABI_HAS_FIELD(accel_core_offer, offer->struct_size, services) ||
      !ACCEL_ABI_HAS_FIELD(accel_plugin_answer, answer->struct_size, register_backends) ||
      !ACCEL_ABI_HAS_FIELD(accel_core_services, offer->services->struct_size,
                           register_backend)) {
    return ACCEL_ERROR_VERSION;
  }
  answer->plugin_newest_version = PLUGTEST_NEWEST;
  answer->plugin_oldest_version = PLUGTEST_OLDEST;
  answer->name = PLUGTEST_TYPE;
  answer->version_text = "1.2.3";
  /* The lower of the two newest versions, unless that is below the floor. */
  uint32_t version =
      offer->newest_version < PLUGTEST_NEWEST ? offer->newest_version : PLUGTEST_NEWEST;
  if (version < PLUGTEST_OLDEST) {
    offer->services->set_error(offer->core, ACCEL_ERROR_VERSION,
                               PLUGTEST_TYPE " needs a newer plugin API than offered");
    return ACCEL_ERROR_VERSION;
  }
  g_services = offer->services;
  answer->version = version;
  answer->register_backends = register_backends;
  return ACCEL_OK;
}
