/* A backend plugin written in plain C11 against the plugin ABI alone
 * (accel/plugin_abi.h), built once per frozen API version (tests/abi/v1.x)
 * and loaded into the current core: the proof that a plugin built for an
 * older API keeps loading and keeps its contract. It does not link the core:
 * it reaches it only through the services table the entry is offered.
 *
 * This file is the entry (negotiation, registration, the bad inputs); the
 * device is abi_test_device.c: ABITEST_DEVICES synchronous devices whose
 * memory is host memory from aligned_alloc. It declares every group: low,
 * high, device, streams, events, graphs and copies from its tables, memory
 * and memory_history from the core's caches over its segments.
 *
 * Every table it hands the core is a malloc'd block of exactly struct_size
 * bytes, freed as soon as register_backend returns (the ABI lets tables be
 * temporaries): under AddressSanitizer a core that reads past a table's end,
 * or keeps the pointer instead of a copy, is caught.
 *
 * Switches (-D), one per variant the loader tests build:
 *  ABITEST_TYPE "name"        its device type (several builds coexist)
 *  ABITEST_DEVICES n          device count (default 2)
 *  ABITEST_FLOOR v            the oldest version it accepts (default: major.0)
 *  ABITEST_IGNORE_OFFER       answers its own newest version, whatever offered
 *  ABITEST_SPEAKS v           answers at most v (a version both sides know)
 *  ABITEST_NO_ENTRY           exports no entry at all
 *  ABITEST_ENTRY_FAILS        the entry fails with a message
 *  ABITEST_ANSWER_UNFILLED    the entry returns ACCEL_OK, answer untouched
 *  ABITEST_ANSWER_GARBAGE     the answer's version is garbage
 *  ABITEST_NO_REGISTER        the answer has no register_backends
 *  ABITEST_STREAMS_SIZE n     the streams table claims struct_size n
 *  ABITEST_NULL_GRAPHS_TABLE  declares graphs without a table
 *  ABITEST_NULL_GRAPH_REPLAY  a graphs table without replay
 *  ABITEST_FAIL_HALFWAY       registers one backend, then fails
 *  ABITEST_SHORT_GRAPHS_TABLE the graphs table of API 1.0 in a later build
 *  ABITEST_NEXT_MINOR_MEMBER  the headers have a member the core cannot know
 *                             (accel_graph_fns.abitest_next_minor), filled */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_test_device.h"

/* The oldest version this plugin accepts (its floor). */
#ifndef ABITEST_FLOOR
#define ABITEST_FLOOR ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, 0)
#endif

#define ABITEST_TEST_EXPORT __attribute__((visibility("default")))

/* ---- the core, as the offer gave it ---- */

accel_core* abitest_core;
const accel_core_services* abitest_services;
static _Atomic uint32_t g_negotiated_version;
/* The version the entry answered (what register_backends may use). */
static uint32_t g_answered_version;

accel_status abitest_fail(accel_status code, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  abitest_services->set_error(abitest_core, code, message);
  return code;
}

void abitest_version_text(uint32_t version, char* out, size_t size) {
  snprintf(out, size, "%u.%u", (unsigned)ACCEL_PLUGIN_ABI_MAJOR_OF(version),
           (unsigned)ACCEL_PLUGIN_ABI_MINOR_OF(version));
}

/* ---- the tables, copied into blocks of exactly their struct_size ---- */

/* A block holding the first `size` bytes of `table` (at least its size
 * field, which a reader must be able to read), with struct_size = `size`.
 * `size` above sizeof the table claims more than the block holds. */
static void* table_block(const void* table, size_t table_size, uint32_t size) {
  size_t bytes = size < table_size ? size : table_size;
  if (bytes < sizeof(uint32_t)) bytes = sizeof(uint32_t);
  unsigned char* block = malloc(bytes);
  if (block == NULL) return NULL;
  memcpy(block, table, bytes);
  memcpy(block, &size, sizeof size);
  return block;
}
#define ABITEST_TABLE(table) table_block(&(table), sizeof(table), (uint32_t)sizeof(table))

enum {
  TABLE_LOW,
  TABLE_HIGH,
  TABLE_DEVICE,
  TABLE_STREAMS,
  TABLE_EVENTS,
  TABLE_GRAPHS,
  TABLE_COPIES,
  TABLE_DEVICE_MEMORY,
  TABLE_PINNED_MEMORY,
#if ABITEST_HEADERS_HAVE_1_3
  TABLE_FILL,
#endif
  TABLE_COUNT
};

/* The device type of the first backend registered. */
static _Atomic int32_t g_first_type = -1;

static accel_status register_one_backend(accel_core* core, const char* type_name) {
  int32_t type = 0;
  accel_status status = abitest_services->register_device_type(core, type_name, &type);
  if (status != ACCEL_OK) return status;
  int32_t unset = -1;
  atomic_compare_exchange_strong(&g_first_type, &unset, type);

  abitest_tables t;
  abitest_device_tables(&t);
#ifdef ABITEST_NULL_GRAPH_REPLAY
  t.graphs.replay = NULL;
#endif
  void* tables[TABLE_COUNT] = {
    ABITEST_TABLE(t.low),
    ABITEST_TABLE(t.high),
    ABITEST_TABLE(t.device),
    ABITEST_TABLE(t.streams),
    ABITEST_TABLE(t.events),
    ABITEST_TABLE(t.graphs),
    ABITEST_TABLE(t.copies),
    ABITEST_TABLE(t.device_memory),
    ABITEST_TABLE(t.pinned_memory),
#if ABITEST_HEADERS_HAVE_1_3
    ABITEST_TABLE(t.fill),
#endif
  };
#ifdef ABITEST_STREAMS_SIZE
  free(tables[TABLE_STREAMS]);
  tables[TABLE_STREAMS] = table_block(&t.streams, sizeof t.streams, ABITEST_STREAMS_SIZE);
#endif
#ifdef ABITEST_SHORT_GRAPHS_TABLE
  free(tables[TABLE_GRAPHS]);
  tables[TABLE_GRAPHS] =
      table_block(&t.graphs, sizeof t.graphs, offsetof(accel_graph_fns, prepare_replay));
#endif
  for (int i = 0; i < TABLE_COUNT; ++i) {
    if (tables[i] == NULL) status = ACCEL_ERROR_OUT_OF_MEMORY;
  }
  if (status == ACCEL_OK) {
    accel_backend backend;
    memset(&backend, 0, sizeof backend);
    backend.struct_size = sizeof backend;
    backend.device_type = type;
    backend.groups = ACCEL_GROUP_LOW | ACCEL_GROUP_HIGH | ACCEL_GROUP_DEVICE |
                     ACCEL_GROUP_STREAMS | ACCEL_GROUP_EVENTS | ACCEL_GROUP_MEMORY |
                     ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS | ACCEL_GROUP_COPIES;
    backend.low = tables[TABLE_LOW];
    backend.high = tables[TABLE_HIGH];
    backend.device = tables[TABLE_DEVICE];
    backend.streams = tables[TABLE_STREAMS];
    backend.events = tables[TABLE_EVENTS];
    backend.graphs = tables[TABLE_GRAPHS];
#ifdef ABITEST_NULL_GRAPHS_TABLE
    backend.graphs = NULL;
#endif
    backend.copies = tables[TABLE_COPIES];
    backend.device_memory = tables[TABLE_DEVICE_MEMORY];
    backend.device_memory_ctx = t.device_memory_ctx;
    backend.pinned_memory = tables[TABLE_PINNED_MEMORY];
    backend.pinned_memory_ctx = t.pinned_memory_ctx;
#if ABITEST_HEADERS_HAVE_1_3
    backend.groups |= ACCEL_GROUP_FILL;
    backend.fill = tables[TABLE_FILL];
#endif
    accel_backend* block = table_block(&backend, sizeof backend, sizeof backend);
    status = block != NULL
                 ? abitest_services->register_backend(core, block)
                 : abitest_fail(ACCEL_ERROR_OUT_OF_MEMORY, "no memory for the backend");
    free(block);
  } else {
    status = abitest_fail(status, "no memory for the tables of '%s'", type_name);
  }
  for (int i = 0; i < TABLE_COUNT; ++i) free(tables[i]);
  return status;
}

/* Unused by the variants whose entry never hands it over. */
__attribute__((unused)) static accel_status register_backends(accel_core* core) {
  accel_status status = register_one_backend(core, ABITEST_TYPE);
#ifdef ABITEST_FAIL_HALFWAY
  if (status == ACCEL_OK) {
    return abitest_fail(ACCEL_ERROR_DEVICE, ABITEST_TYPE
                        ": the second device's firmware did not load (abitest "
                        "fails half-way on purpose)");
  }
#endif
#if ABITEST_HEADERS_HAVE_1_1
  /* A service of 1.1: only when both agreed on 1.1 or later, and the
   * core's table holds it. */
  if (status == ACCEL_OK && g_answered_version >= ACCEL_PLUGIN_ABI_VERSION(1, 1) &&
      ACCEL_ABI_HAS_FIELD(accel_core_services, abitest_services->struct_size,
                          negotiated_version) &&
      abitest_services->negotiated_version != NULL) {
    atomic_store(&g_negotiated_version, abitest_services->negotiated_version(core));
  }
#endif
  return status;
}

/* ---- the entry ---- */

#define ABITEST_ANSWER(answer, field, value)                                    \
  do {                                                                          \
    if (ACCEL_ABI_HAS_FIELD(accel_plugin_answer, (answer)->struct_size, field)) \
      (answer)->field = (value);                                                \
  } while (0)

#ifndef ABITEST_NO_ENTRY
ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(const accel_core_offer* offer,
                                                        accel_plugin_answer* answer) {
  if (offer == NULL || answer == NULL ||
      !ACCEL_ABI_HAS_FIELD(accel_core_offer, offer->struct_size, services) ||
      offer->services == NULL ||
      !ACCEL_ABI_HAS_FIELD(accel_core_services, offer->services->struct_size,
                           register_backend)) {
    return ACCEL_ERROR_VERSION; /* no way to say more without the services */
  }
  abitest_core = offer->core;
  abitest_services = offer->services;
#if defined(ABITEST_ENTRY_FAILS)
  return abitest_fail(ACCEL_ERROR_NOT_AVAILABLE, ABITEST_TYPE
                      ": no device driver found (the entry fails on purpose)");
#elif defined(ABITEST_ANSWER_UNFILLED)
  return ACCEL_OK;
#else
  const uint32_t newest = ACCEL_PLUGIN_ABI_CURRENT;
#ifdef ABITEST_IGNORE_OFFER
  uint32_t version = newest;
#else
  uint32_t version = offer->newest_version < newest ? offer->newest_version : newest;
#endif
#ifdef ABITEST_SPEAKS
  if (version > ABITEST_SPEAKS) version = ABITEST_SPEAKS;
#endif
  g_answered_version = version;
  ABITEST_ANSWER(answer, plugin_newest_version, newest);
  ABITEST_ANSWER(answer, plugin_oldest_version, ABITEST_FLOOR);
  ABITEST_ANSWER(answer, name, ABITEST_TYPE);
  ABITEST_ANSWER(answer, version_text, "0.1.0");
#ifdef ABITEST_NO_REGISTER
  ABITEST_ANSWER(answer, register_backends, NULL);
#else
  ABITEST_ANSWER(answer, register_backends, register_backends);
#endif
#ifdef ABITEST_ANSWER_GARBAGE
  ABITEST_ANSWER(answer, version, 0xdeadbeefu);
#else
  ABITEST_ANSWER(answer, version, version);
#endif
  if (version < ABITEST_FLOOR) {
    char floor[32], offered[32];
    abitest_version_text(ABITEST_FLOOR, floor, sizeof floor);
    abitest_version_text(offer->newest_version, offered, sizeof offered);
    return abitest_fail(ACCEL_ERROR_VERSION,
                        ABITEST_TYPE
                        " needs plugin API %s or later; this core offers at most %s",
                        floor, offered);
  }
  return ACCEL_OK;
#endif
}
#endif

/* ---- what the tests read (not part of any ABI) ---- */

/* How often the core called prepare_replay. */
ABITEST_TEST_EXPORT uint64_t abitest_prepare_replay_calls(void) {
  return abitest_prepare_replay_count();
}

/* Registers another backend (ABITEST_TYPE "_late") after register_backends
 * returned, as a plugin that kept the core's handle might: the core must
 * refuse. Returns the status. */
ABITEST_TEST_EXPORT accel_status abitest_register_late(void) {
  return register_one_backend(abitest_core, ABITEST_TYPE "_late");
}

/* The runtime's own memory (abitest_runtime_regions) and how often the
 * core asked device_of about a pointer. */
ABITEST_TEST_EXPORT void abitest_runtime_memory(void** device_region,
                                                void** pinned_region, size_t* bytes) {
  abitest_runtime_regions(device_region, pinned_region, bytes);
}
ABITEST_TEST_EXPORT uint64_t abitest_device_of_calls(void) {
  return abitest_device_of_count();
}

/* What the core's negotiated_version service answered; 0 when this build's
 * headers predate it or the core's table does not hold it. */
ABITEST_TEST_EXPORT uint32_t abitest_negotiated_version(void) {
  return atomic_load(&g_negotiated_version);
}

#if ABITEST_HEADERS_HAVE_1_2
/* The services of 1.2, asked from a thread of the test: the first four
 * uint32 outputs of the core's reference fill at seed 42, offset 7 (0s when
 * the core's table does not hold fill_host), and what fill_outputs says a
 * fill of 3 normal floats consumes. */
ABITEST_TEST_EXPORT accel_status abitest_fill_host(uint32_t* out4) {
  if (!ACCEL_ABI_HAS_FIELD(accel_core_services, abitest_services->struct_size,
                           fill_host)) {
    return ACCEL_ERROR_NOT_SUPPORTED;
  }
  return abitest_services->fill_host(abitest_core, ACCEL_FILL_BITS32, out4, 4, 0, 0, 42,
                                     7);
}
ABITEST_TEST_EXPORT uint64_t abitest_fill_outputs_of_3_normal_floats(void) {
  return abitest_services->fill_outputs(ACCEL_FILL_NORMAL_FLOAT, 3);
}
/* fill_host with a kind no version defines: the status, and the message
 * the core reports through set_error (the last one is kept). */
ABITEST_TEST_EXPORT accel_status abitest_fill_host_bad_kind(void) {
  uint32_t out = 0;
  return abitest_services->fill_host(abitest_core, 99, &out, 1, 0, 0, 0, 0);
}
/* A retained default generator: reserving through it moves the default
 * generator of device 0, and releasing it leaves the default alive.
 * Returns the offset the second of two reservations of 8 started at. */
ABITEST_TEST_EXPORT uint64_t abitest_reserve_through_retained(void) {
  accel_generator* def = NULL;
  accel_generator* kept = NULL;
  uint64_t seed = 0;
  uint64_t first = 0;
  uint64_t second = 0;
  if (abitest_services->default_generator(abitest_core, atomic_load(&g_first_type), 0,
                                          &def) != ACCEL_OK ||
      abitest_services->retain_generator(def, &kept) != ACCEL_OK) {
    return UINT64_MAX;
  }
  (void)abitest_services->reserve_philox(kept, 8, &seed, &first);
  abitest_services->release_generator(kept);
  (void)abitest_services->reserve_philox(def, 8, &seed, &second);
  return second - first;
}
/* use_block on `ptr` of this plugin's backend: the state, and in *use the
 * use taken (NULL unless live) and in *requested the block's bytes. */
ABITEST_TEST_EXPORT int32_t abitest_use_block(const void* ptr, accel_block_use** use,
                                              size_t* requested) {
  int8_t device = 0;
  void* base = NULL;
  *use = NULL;
  return abitest_services->use_block(abitest_core, atomic_load(&g_first_type), ptr, use,
                                     &device, &base, requested);
}
ABITEST_TEST_EXPORT void abitest_release_block_use(accel_block_use* use) {
  abitest_services->release_block_use(use);
}
/* The current stream of `device` as the core keeps it for this backend; -2
 * when the core refuses (this backend keeps its current streams itself). */
ABITEST_TEST_EXPORT int64_t abitest_current_stream(int8_t device) {
  int64_t stream = -1;
  if (abitest_services->current_stream(abitest_core, atomic_load(&g_first_type), device,
                                       &stream) != ACCEL_OK) {
    return -2;
  }
  return stream;
}
#endif

#if ABITEST_HEADERS_HAVE_1_3
/* join_capture (1.3): stream `joined` of `device` joins the capture of
 * stream `capturing`; the service's status. */
ABITEST_TEST_EXPORT accel_status abitest_join_capture(int8_t device, int64_t capturing,
                                                      int64_t joined) {
  accel_stream from = {capturing, device};
  accel_stream to = {joined, device};
  return abitest_services->join_capture(abitest_core, atomic_load(&g_first_type), from,
                                        to);
}
#endif
