/* libaccel_laxplug.so: a misbehaving backend on the C plugin boundary for
 * the validation layer's tests (tests/layers/validation_plugin_test.cpp).
 * Its streams, events, graphs and copies check nothing a call gives them:
 * any stream, any event (recorded or not, of any device, destroyed), any
 * graph, a synchronising call during a capture. Device memory is the core's
 * caches over host memory (aligned_alloc), as every C plugin's is.
 *
 * It counts the calls of each of its functions, for a test to see which
 * wrong calls reached it: laxplug_calls("events.block"), exported. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "accel/plugin_abi.h"

enum { kDevices = 2, kAlignment = 256, kCounters = 16 };

static const accel_core_services* g_services;
static atomic_ullong g_next_id = 1;

/* The counted functions, by name. */
static const char* const k_counted[kCounters] = {"streams.query",
                                                 "streams.synchronize",
                                                 "events.record",
                                                 "events.block",
                                                 "events.query",
                                                 "events.synchronize",
                                                 "events.elapsed_ms",
                                                 "device.synchronize",
                                                 "copies.host_to_device",
                                                 "copies.device_to_host",
                                                 "copies.device_to_device",
                                                 "graphs.capture_begin",
                                                 "graphs.capture_end",
                                                 NULL,
                                                 NULL,
                                                 NULL};
static atomic_int g_calls[kCounters];

static void count(int which) { atomic_fetch_add(&g_calls[which], 1); }

ACCEL_PLUGIN_EXPORT int laxplug_calls(const char* function) {
  for (int i = 0; i < kCounters && k_counted[i] != NULL; ++i) {
    if (strcmp(k_counted[i], function) == 0) return atomic_load(&g_calls[i]);
  }
  return -1;
}

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

static accel_status device_synchronize(void* ctx, int8_t device) {
  (void)ctx;
  (void)device;
  count(7);
  return ACCEL_OK;
}
static accel_status show_config(void* ctx, const accel_text_sink* sink) {
  (void)ctx;
  sink->append(sink->sink, "laxplug: checks nothing", 23);
  return ACCEL_OK;
}
static accel_status properties(void* ctx, int8_t device, accel_device_properties* out) {
  (void)ctx;
  (void)device;
  strcpy(out->name, "laxplug");
  return ACCEL_OK;
}

static accel_status stream_get_default(void* ctx, int8_t device, int64_t* out) {
  (void)ctx;
  (void)device;
  *out = 0;
  return ACCEL_OK;
}
static accel_status stream_create(void* ctx, int8_t device, int32_t priority,
                                  int64_t* out) {
  (void)ctx;
  (void)device;
  (void)priority;
  *out = (int64_t)atomic_fetch_add(&g_next_id, 1);
  return ACCEL_OK;
}
static accel_status stream_query(void* ctx, accel_stream stream, int32_t* done) {
  (void)ctx;
  (void)stream;
  count(0);
  *done = 1;
  return ACCEL_OK;
}
static accel_status stream_synchronize(void* ctx, accel_stream stream) {
  (void)ctx;
  (void)stream;
  count(1);
  return ACCEL_OK;
}
static accel_status priority_range(void* ctx, int8_t device, int32_t* lowest,
                                   int32_t* greatest) {
  (void)ctx;
  (void)device;
  *lowest = 0;
  *greatest = 0;
  return ACCEL_OK;
}

static accel_status event_create(void* ctx, int8_t device, uint32_t flags,
                                 uint64_t* out) {
  (void)ctx;
  (void)device;
  (void)flags;
  *out = atomic_fetch_add(&g_next_id, 1);
  return ACCEL_OK;
}
static void event_destroy(void* ctx, uint64_t event) {
  (void)ctx;
  (void)event;
}
static accel_status event_record(void* ctx, uint64_t event, accel_stream stream) {
  (void)ctx;
  (void)event;
  (void)stream;
  count(2);
  return ACCEL_OK;
}
static accel_status event_block(void* ctx, uint64_t event, accel_stream stream) {
  (void)ctx;
  (void)event;
  (void)stream;
  count(3);
  return ACCEL_OK;
}
static accel_status event_query(void* ctx, uint64_t event, int32_t* done) {
  (void)ctx;
  (void)event;
  count(4);
  *done = 1;
  return ACCEL_OK;
}
static accel_status event_synchronize(void* ctx, uint64_t event) {
  (void)ctx;
  (void)event;
  count(5);
  return ACCEL_OK;
}
static accel_status elapsed_ms(void* ctx, uint64_t start, uint64_t end, double* out) {
  (void)ctx;
  (void)start;
  (void)end;
  count(6);
  *out = 0.0;
  return ACCEL_OK;
}

static accel_status graph_create(void* ctx, int32_t keep, uint64_t* out) {
  (void)ctx;
  (void)keep;
  *out = atomic_fetch_add(&g_next_id, 1);
  return ACCEL_OK;
}
static accel_status graph_any(void* ctx, uint64_t graph) {
  (void)ctx;
  (void)graph;
  return ACCEL_OK;
}
static accel_status capture_begin(void* ctx, uint64_t graph, accel_stream stream,
                                  int32_t mode) {
  (void)ctx;
  (void)graph;
  (void)stream;
  (void)mode;
  count(11);
  return ACCEL_OK;
}
static accel_status capture_end(void* ctx, uint64_t graph) {
  (void)ctx;
  (void)graph;
  count(12);
  return ACCEL_OK;
}

static accel_status host_to_device(void* ctx, void* dst, const void* src, size_t bytes,
                                   accel_stream stream) {
  (void)ctx;
  (void)stream;
  count(8);
  memmove(dst, src, bytes);
  return ACCEL_OK;
}
static accel_status device_to_host(void* ctx, void* dst, const void* src, size_t bytes,
                                   accel_stream stream) {
  (void)ctx;
  (void)stream;
  count(9);
  memmove(dst, src, bytes);
  return ACCEL_OK;
}
static accel_status device_to_device(void* ctx, void* dst, const void* src, size_t bytes,
                                     accel_stream stream) {
  (void)ctx;
  (void)stream;
  count(10);
  memmove(dst, src, bytes);
  return ACCEL_OK;
}

static const accel_low_fns k_low = {
    sizeof(accel_low_fns), is_built, is_available, device_count, NULL, NULL, NULL};
static const accel_high_fns k_high = {sizeof(accel_high_fns), init, NULL};
static const accel_device_fns k_device = {sizeof(accel_device_fns), device_synchronize,
                                          show_config, properties};
static const accel_stream_fns k_streams = {
    sizeof(accel_stream_fns), NULL,          NULL,
    stream_get_default,       stream_create, stream_query,
    stream_synchronize,       priority_range};
static const accel_event_fns k_events = {sizeof(accel_event_fns),
                                         event_create,
                                         event_destroy,
                                         event_record,
                                         event_block,
                                         event_query,
                                         event_synchronize,
                                         elapsed_ms};
static const accel_graph_fns k_graphs = {sizeof(accel_graph_fns),
                                         graph_create,
                                         graph_any,
                                         capture_begin,
                                         capture_end,
                                         graph_any,
                                         graph_any,
                                         graph_any,
                                         NULL};
static const accel_copy_fns k_copies = {sizeof(accel_copy_fns), host_to_device,
                                        device_to_host, device_to_device};

static accel_status register_backends(accel_core* core) {
  int32_t type = 0;
  accel_status status = g_services->register_device_type(core, "laxplug", &type);
  if (status != ACCEL_OK) return status;
  static accel_segment_fns memory;
  memset(&memory, 0, sizeof memory);
  memory.struct_size = sizeof memory;
  memory.allocate_segment = allocate_segment;
  memory.free_segment = free_segment;
  accel_backend backend;
  memset(&backend, 0, sizeof backend);
  backend.struct_size = sizeof backend;
  backend.device_type = type;
  backend.groups = ACCEL_GROUP_LOW | ACCEL_GROUP_HIGH | ACCEL_GROUP_DEVICE |
                   ACCEL_GROUP_STREAMS | ACCEL_GROUP_EVENTS | ACCEL_GROUP_GRAPHS |
                   ACCEL_GROUP_COPIES;
  backend.low = &k_low;
  backend.high = &k_high;
  backend.device = &k_device;
  backend.streams = &k_streams;
  backend.events = &k_events;
  backend.graphs = &k_graphs;
  backend.copies = &k_copies;
  backend.device_memory = &memory;
  backend.pinned_memory = &memory;
  return g_services->register_backend(core, &backend);
}

ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(const accel_core_offer* offer,
                                                        accel_plugin_answer* answer) {
  if (!ACCEL_ABI_HAS_FIELD(accel_core_offer, offer->struct_size, services) ||
      !ACCEL_ABI_HAS_FIELD(accel_plugin_answer, answer->struct_size, register_backends) ||
      !ACCEL_ABI_HAS_FIELD(accel_core_services, offer->services->struct_size,
                           register_backend)) {
    return ACCEL_ERROR_VERSION;
  }
  answer->plugin_newest_version = ACCEL_PLUGIN_ABI_CURRENT;
  answer->plugin_oldest_version = ACCEL_PLUGIN_ABI_VERSION(1, 0);
  answer->name = "laxplug";
  answer->version_text = "0.1.0";
  answer->version = offer->newest_version < ACCEL_PLUGIN_ABI_CURRENT
                        ? offer->newest_version
                        : ACCEL_PLUGIN_ABI_CURRENT;
  g_services = offer->services;
  answer->register_backends = register_backends;
  return ACCEL_OK;
}
