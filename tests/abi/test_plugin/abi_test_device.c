/* The test plugin's device: ABITEST_DEVICES synchronous devices whose
 * memory is host memory from aligned_alloc, so that work is done when the
 * call that enqueued it returns. It provides low, high, device, streams,
 * events, graphs and copies, and the raw segments under the core's device
 * and pinned caches (with their capacity since API 1.1, and since 1.4
 * device_of for a region of each kind that its runtime knows outside the
 * caches, as a framework's own allocation would be). Plain C11 (and
 * POSIX threads), against the plugin ABI alone; abi_test_device.h says what
 * it shares with the entry. */
#include "abi_test_device.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Capacity of each device, and of the pinned memory. */
#define ABITEST_MEMORY_BYTES ((uint64_t)1 << 30)
#define ABITEST_SEGMENT_ALIGNMENT 512
/* At least one slot even for a build without devices. */
#define ABITEST_DEVICE_SLOTS (ABITEST_DEVICES > 0 ? ABITEST_DEVICES : 1)

/* ---- devices ---- */

typedef struct device_state {
  _Atomic int has_context; /* set by its first segment */
  _Atomic int64_t created_streams;
} device_state;
static device_state g_devices[ABITEST_DEVICE_SLOTS];

static _Thread_local int8_t t_current_device;
static _Thread_local int64_t t_current_stream[ABITEST_DEVICE_SLOTS];

static int valid_device(int8_t device) { return device >= 0 && device < ABITEST_DEVICES; }

/* Stream 0 is each device's default; create hands out 1, 2, ... */
int abitest_known_stream(accel_stream stream) {
  return valid_device(stream.device) && stream.id >= 0 &&
         stream.id <= atomic_load(&g_devices[stream.device].created_streams);
}

accel_status abitest_unknown_stream(const char* function, accel_stream stream) {
  return abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                      "%s: stream %lld of '" ABITEST_TYPE
                      ":%d' was never created; use the default stream or a new one",
                      function, (long long)stream.id, (int)stream.device);
}

/* ---- low ---- */

static int32_t is_built(void* ctx) { return (void)ctx, 1; }
static int32_t is_available(void* ctx) { return (void)ctx, ABITEST_DEVICES > 0; }
static int32_t device_count(void* ctx) { return (void)ctx, ABITEST_DEVICES; }

static accel_status get_current_device(void* ctx, int8_t* out) {
  (void)ctx;
  *out = t_current_device;
  return ACCEL_OK;
}

static accel_status set_current_device(void* ctx, int8_t device) {
  (void)ctx;
  if (!valid_device(device)) {
    return abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                        "device %d out of range for '" ABITEST_TYPE "'", (int)device);
  }
  t_current_device = device;
  return ACCEL_OK;
}

/* ---- high ---- */

static accel_status init(void* ctx) { return (void)ctx, ACCEL_OK; }

static int32_t has_primary_context(void* ctx, int8_t device) {
  (void)ctx;
  return valid_device(device) && atomic_load(&g_devices[device].has_context);
}

/* ---- device ---- */

static accel_status device_synchronize(void* ctx, int8_t device) {
  (void)ctx, (void)device;
  return ACCEL_OK; /* nothing is ever pending */
}

static accel_status show_config(void* ctx, const accel_text_sink* sink) {
  (void)ctx;
  char text[160];
  char version[32];
  abitest_version_text(ACCEL_PLUGIN_ABI_CURRENT, version, sizeof version);
  const int length = snprintf(text, sizeof text,
                              ABITEST_TYPE
                              ": %d synchronous host-memory devices, "
                              "built against plugin API %s\n",
                              ABITEST_DEVICES, version);
  sink->append(sink->sink, text, (size_t)length);
  return ACCEL_OK;
}

/* Writes only the fields the reader's struct_size holds. */
#define ABITEST_SET(out, field, value)                                           \
  do {                                                                           \
    if (ACCEL_ABI_HAS_FIELD(accel_device_properties, (out)->struct_size, field)) \
      (out)->field = (value);                                                    \
  } while (0)

static accel_status properties(void* ctx, int8_t device, accel_device_properties* out) {
  (void)ctx;
  if (ACCEL_ABI_HAS_FIELD(accel_device_properties, out->struct_size, name)) {
    snprintf(out->name, sizeof out->name, ABITEST_TYPE " device %d", (int)device);
  }
  ABITEST_SET(out, total_memory_bytes, ABITEST_MEMORY_BYTES);
  ABITEST_SET(out, multiprocessor_count, 1);
  ABITEST_SET(out, warp_size, 1);
  ABITEST_SET(out, is_integrated, 1);
  return ACCEL_OK;
}

/* ---- streams ---- */

static accel_status get_current_stream(void* ctx, int8_t device, int64_t* out) {
  (void)ctx;
  *out = t_current_stream[device];
  return ACCEL_OK;
}

static accel_status set_current_stream(void* ctx, accel_stream stream) {
  (void)ctx;
  if (!abitest_known_stream(stream)) return abitest_unknown_stream("set_current", stream);
  t_current_stream[stream.device] = stream.id;
  return ACCEL_OK;
}

static accel_status get_default_stream(void* ctx, int8_t device, int64_t* out) {
  (void)ctx, (void)device;
  *out = 0;
  return ACCEL_OK;
}

static accel_status create_stream(void* ctx, int8_t device, int32_t priority,
                                  int64_t* out) {
  (void)ctx, (void)priority; /* one priority: the core checked it is 0 */
  *out = atomic_fetch_add(&g_devices[device].created_streams, 1) + 1;
  return ACCEL_OK;
}

static accel_status query_stream(void* ctx, accel_stream stream, int32_t* done) {
  (void)ctx;
  if (!abitest_known_stream(stream)) return abitest_unknown_stream("query", stream);
  *done = 1;
  return ACCEL_OK;
}

static accel_status synchronize_stream(void* ctx, accel_stream stream) {
  (void)ctx;
  if (!abitest_known_stream(stream)) return abitest_unknown_stream("synchronize", stream);
  if (abitest_stream_is_capturing(stream)) {
    return abitest_fail(ACCEL_ERROR_DEVICE,
                        "synchronize: stream %lld of '" ABITEST_TYPE
                        ":%d' is being captured; end the capture first",
                        (long long)stream.id, (int)stream.device);
  }
  return ACCEL_OK;
}

static accel_status priority_range(void* ctx, int8_t device, int32_t* lowest,
                                   int32_t* greatest) {
  (void)ctx, (void)device;
  *lowest = 0;
  *greatest = 0;
  return ACCEL_OK;
}

/* ---- copies: the core checked the ranges ---- */

static accel_status copy(const char* function, void* dst, const void* src, size_t bytes,
                         accel_stream stream) {
  if (!abitest_known_stream(stream)) return abitest_unknown_stream(function, stream);
  memcpy(dst, src, bytes);
  return ACCEL_OK;
}
static accel_status host_to_device(void* ctx, void* dst, const void* src, size_t bytes,
                                   accel_stream stream) {
  (void)ctx;
  return copy("host_to_device", dst, src, bytes, stream);
}
static accel_status device_to_host(void* ctx, void* dst, const void* src, size_t bytes,
                                   accel_stream stream) {
  (void)ctx;
  return copy("device_to_host", dst, src, bytes, stream);
}
static accel_status device_to_device(void* ctx, void* dst, const void* src, size_t bytes,
                                     accel_stream stream) {
  (void)ctx;
  return copy("device_to_device", dst, src, bytes, stream);
}

#if ABITEST_HEADERS_HAVE_1_3
/* ---- the fill group (1.3): the core's reference fill into the device's
 * memory, which the host addresses; its draw reserved when it runs ---- */

static accel_status fill(void* ctx, accel_stream stream, int32_t kind, void* data,
                         uint64_t count, double a, double b, accel_generator* generator) {
  (void)ctx;
  if (!abitest_known_stream(stream)) return abitest_unknown_stream("fill", stream);
  if (abitest_stream_is_capturing(stream)) {
    return abitest_fail(ACCEL_ERROR_NOT_SUPPORTED,
                        ABITEST_TYPE " records no fills in a graph");
  }
  uint64_t seed = 0;
  uint64_t offset = 0;
  accel_status status = abitest_services->reserve_philox(
      generator, abitest_services->fill_outputs(kind, count), &seed, &offset);
  if (status != ACCEL_OK) return status;
  return abitest_services->fill_host(abitest_core, kind, data, count, a, b, seed, offset);
}
#endif

/* ---- raw memory under the core's caches ---- */

#define ABITEST_RUNTIME_REGION_BYTES 4096

typedef struct memory_kind {
  int marks_context; /* device memory: a segment creates the device's context */
  _Atomic uint64_t used[ABITEST_DEVICE_SLOTS];
  /* Memory of this kind the runtime knows outside the core's caches. */
  unsigned char runtime_region[ABITEST_RUNTIME_REGION_BYTES];
} memory_kind;
static memory_kind g_device_memory = {1, {0}, {0}};
static memory_kind g_pinned_memory = {0, {0}, {0}};
static _Atomic uint64_t g_device_of_calls;

void abitest_runtime_regions(void** device_region, void** pinned_region, size_t* bytes) {
  *device_region = g_device_memory.runtime_region;
  *pinned_region = g_pinned_memory.runtime_region;
  *bytes = ABITEST_RUNTIME_REGION_BYTES;
}

uint64_t abitest_device_of_count(void) { return atomic_load(&g_device_of_calls); }

static accel_status allocate_segment(void* ctx, int8_t device, size_t bytes, void** out) {
  memory_kind* kind = ctx;
  *out = NULL;
  const size_t rounded = (bytes + ABITEST_SEGMENT_ALIGNMENT - 1) /
                         ABITEST_SEGMENT_ALIGNMENT * ABITEST_SEGMENT_ALIGNMENT;
  if (!valid_device(device) || rounded < bytes) {
    return abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                        "allocate_segment: device %d, %zu bytes", (int)device, bytes);
  }
  const uint64_t used = atomic_fetch_add(&kind->used[device], bytes);
  if (used + bytes > ABITEST_MEMORY_BYTES) {
    atomic_fetch_sub(&kind->used[device], bytes);
    return ACCEL_OK; /* out of memory: *out stays NULL */
  }
  *out = aligned_alloc(ABITEST_SEGMENT_ALIGNMENT, rounded);
  if (*out == NULL) {
    atomic_fetch_sub(&kind->used[device], bytes);
    return ACCEL_OK;
  }
  if (kind->marks_context) atomic_store(&g_devices[device].has_context, 1);
  return ACCEL_OK;
}

static void free_segment(void* ctx, int8_t device, void* data, size_t bytes) {
  memory_kind* kind = ctx;
  free(data);
  atomic_fetch_sub(&kind->used[device], bytes);
}

/* Unused in builds whose headers predate accel_segment_fns.memory_info (1.1). */
__attribute__((unused)) static void memory_info(void* ctx, int8_t device, uint64_t* total,
                                                uint64_t* free_bytes) {
  memory_kind* kind = ctx;
  *total = ABITEST_MEMORY_BYTES;
  *free_bytes = ABITEST_MEMORY_BYTES - atomic_load(&kind->used[device]);
}

#if ABITEST_HEADERS_HAVE_1_4
/* device_of (1.4): the runtime region of the kind, interior pointers
 * included. Compared as integers: the pointer may belong to anything. */
static int32_t device_of(void* ctx, const void* ptr, int8_t* device) {
  memory_kind* kind = ctx;
  atomic_fetch_add(&g_device_of_calls, 1);
  const uintptr_t base = (uintptr_t)kind->runtime_region;
  const uintptr_t address = (uintptr_t)ptr;
  if (address < base || address - base >= ABITEST_RUNTIME_REGION_BYTES) return 0;
  *device = ABITEST_RUNTIME_DEVICE;
  return 1;
}
#endif

/* ---- the tables ---- */

void abitest_device_tables(abitest_tables* tables) {
  memset(tables, 0, sizeof *tables);
  /* Named members: the headers of 1.4 on have more (unavailable_reason),
   * which this device, always available, leaves null. */
  tables->low = (accel_low_fns){.struct_size = sizeof tables->low,
                                .is_built = is_built,
                                .is_available = is_available,
                                .device_count = device_count,
                                .get_current_device = get_current_device,
                                .set_current_device = set_current_device};
  tables->high = (accel_high_fns){sizeof tables->high, init, has_primary_context};
  tables->device = (accel_device_fns){sizeof tables->device, device_synchronize,
                                      show_config, properties};
  tables->streams = (accel_stream_fns){
      sizeof tables->streams, get_current_stream, set_current_stream, get_default_stream,
      create_stream,          query_stream,       synchronize_stream, priority_range};
  abitest_event_fns(&tables->events);
  abitest_graph_fns(&tables->graphs);
  tables->copies = (accel_copy_fns){sizeof tables->copies, host_to_device, device_to_host,
                                    device_to_device};
#if ABITEST_HEADERS_HAVE_1_3
  tables->fill = (accel_fill_fns){sizeof tables->fill, fill};
#endif
  /* No page mapping and no events: a synchronous device. */
  accel_segment_fns* memory = &tables->device_memory;
  memory->struct_size = sizeof *memory;
  memory->allocate_segment = allocate_segment;
  memory->free_segment = free_segment;
#if ABITEST_HEADERS_HAVE_1_1
  memory->memory_info = memory_info;
#endif
#if ABITEST_HEADERS_HAVE_1_4
  memory->device_of = device_of;
#endif
  tables->device_memory_ctx = &g_device_memory;
  tables->pinned_memory = *memory;
  tables->pinned_memory_ctx = &g_pinned_memory;
}
