/* The test plugin's device (abi_test_device.c) and what it shares with the
 * plugin's entry (abi_test_plugin.c): the switches both read, the core the
 * entry was offered, and the tables the device fills. Both files are
 * compiled against the one plugin ABI header of a build (tests/abi/v1.x or
 * a made-up newer one). */
#ifndef ABI_TEST_DEVICE_H
#define ABI_TEST_DEVICE_H

#include "accel/plugin_abi.h"

#ifndef ABITEST_TYPE
#define ABITEST_TYPE "abitest"
#endif
#ifndef ABITEST_DEVICES
#define ABITEST_DEVICES 2
#endif
/* The members API 1.1 added are in the headers of this build
 * (ACCEL_PLUGIN_ABI_VERSION casts, so #if compares the parts). */
#define ABITEST_HEADERS_HAVE_1_1 \
  (ACCEL_PLUGIN_ABI_MAJOR > 1 || ACCEL_PLUGIN_ABI_MINOR >= 1)
#define ABITEST_HEADERS_HAVE_1_2 \
  (ACCEL_PLUGIN_ABI_MAJOR > 1 || ACCEL_PLUGIN_ABI_MINOR >= 2)
#define ABITEST_HEADERS_HAVE_1_3 \
  (ACCEL_PLUGIN_ABI_MAJOR > 1 || ACCEL_PLUGIN_ABI_MINOR >= 3)
#define ABITEST_HEADERS_HAVE_1_4 \
  (ACCEL_PLUGIN_ABI_MAJOR > 1 || ACCEL_PLUGIN_ABI_MINOR >= 4)

/* The core, as the offer gave it: set by the entry before anything else runs. */
extern accel_core* abitest_core;
extern const accel_core_services* abitest_services;

/* Reports `code` with a printf-style message through the core's set_error,
 * and returns it. */
accel_status abitest_fail(accel_status code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

/* "major.minor" of `version` into `out`. */
void abitest_version_text(uint32_t version, char* out, size_t size);

/* Every table of the device, filled by abitest_device_tables with the
 * struct_size this build's headers give each. */
typedef struct abitest_tables {
  accel_low_fns low;
  accel_high_fns high;
  accel_device_fns device;
  accel_stream_fns streams;
  accel_event_fns events;
  accel_graph_fns graphs;
  accel_copy_fns copies;
#if ABITEST_HEADERS_HAVE_1_3
  accel_fill_fns fill;
#endif
  accel_segment_fns device_memory;
  void* device_memory_ctx;
  accel_segment_fns pinned_memory;
  void* pinned_memory_ctx;
} abitest_tables;
void abitest_device_tables(abitest_tables* tables);

/* Memory of the device's runtime that the core's caches did not hand out,
 * as a framework's own allocation would be (abi_test_device.c): a region of
 * `*bytes` bytes on device ABITEST_RUNTIME_DEVICE, and one of page-locked
 * host memory. Builds on 1.4 headers or later answer device_of for them;
 * every build has them, so that a test can ask an older build's backend. */
#define ABITEST_RUNTIME_DEVICE 1
void abitest_runtime_regions(void** device_region, void** pinned_region, size_t* bytes);
/* How often the core asked device_of, of either kind (0 before 1.4). */
uint64_t abitest_device_of_count(void);

/* Streams (abi_test_device.c): stream 0 is each device's default, created
 * ones count up from 1. abitest_unknown_stream reports one that is not. */
int abitest_known_stream(accel_stream stream);
accel_status abitest_unknown_stream(const char* function, accel_stream stream);

/* Events and graphs (abi_test_handles.c). A graph capturing `stream` makes
 * synchronising it an error, as under CUDA. */
void abitest_event_fns(accel_event_fns* events);
void abitest_graph_fns(accel_graph_fns* graphs);
int abitest_stream_is_capturing(accel_stream stream);
/* How often the core called prepare_replay (since 1.1). */
uint64_t abitest_prepare_replay_count(void);

#endif /* ABI_TEST_DEVICE_H */
