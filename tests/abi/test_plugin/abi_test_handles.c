/* The test plugin's events and graphs: objects the core names by id. Ids
 * come from slot tables with generations, so that an id stays unknown
 * after it was destroyed, even once its slot is reused. On a synchronous
 * device a recorded event is complete at once, and a capture records
 * nothing (the work ran as it was enqueued); the phases of a graph and
 * their errors are the contract's (docs/hooks.md). */
/* clock_gettime and CLOCK_MONOTONIC, beside C11. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi_test_device.h"

static _Atomic uint64_t g_prepare_replay_calls;

uint64_t abitest_prepare_replay_count(void) {
  return atomic_load(&g_prepare_replay_calls);
}

/* ---- handles: a slot table with generations, so a destroyed id stays
 * unknown after its slot is reused ---- */

typedef struct slot {
  uint32_t generation;
  uint32_t next_free; /* index + 1 of the next free slot; 0: none */
  int live;
  /* events */
  int8_t device;
  uint32_t flags;
  int recorded;
  struct timespec recorded_at;
  /* graphs */
  int keep_graph;
  int phase;
  accel_stream stream;
} slot;

typedef struct slot_table {
  pthread_mutex_t lock;
  slot* slots;
  uint32_t count;
  uint32_t first_free; /* index + 1; 0: none */
} slot_table;

static slot_table g_events = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static slot_table g_graphs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* Caller holds table->lock. NULL when out of memory. */
static slot* slot_create(slot_table* table, uint64_t* id) {
  uint32_t index;
  if (table->first_free != 0) {
    index = table->first_free - 1;
    table->first_free = table->slots[index].next_free;
  } else {
    slot* grown = realloc(table->slots, (table->count + 1) * sizeof *grown);
    if (grown == NULL) return NULL;
    table->slots = grown;
    index = table->count++;
    memset(&table->slots[index], 0, sizeof *grown);
  }
  slot* s = &table->slots[index];
  const uint32_t generation = s->generation;
  memset(s, 0, sizeof *s);
  s->generation = generation;
  s->live = 1;
  *id = ((uint64_t)generation << 32) | (uint64_t)(index + 1);
  return s;
}

/* Caller holds table->lock. NULL for an id that is not live. */
static slot* slot_find(slot_table* table, uint64_t id) {
  const uint64_t index = (id & 0xffffffffu) - 1;
  if ((id & 0xffffffffu) == 0 || index >= table->count) return NULL;
  slot* s = &table->slots[index];
  return s->live && s->generation == (uint32_t)(id >> 32) ? s : NULL;
}

/* Caller holds table->lock. */
static void slot_destroy(slot_table* table, slot* s) {
  s->live = 0;
  s->generation++;
  s->next_free = table->first_free;
  table->first_free = (uint32_t)(s - table->slots) + 1;
}

/* ---- events ---- */

static accel_status unknown_event(const char* function, uint64_t event) {
  return abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                      "%s: event %llu is not a live event of '" ABITEST_TYPE "'",
                      function, (unsigned long long)event);
}

static accel_status create_event(void* ctx, int8_t device, uint32_t flags,
                                 uint64_t* out) {
  (void)ctx;
  if (flags & ACCEL_EVENT_INTERPROCESS) {
    return abitest_fail(ACCEL_ERROR_NOT_SUPPORTED,
                        "'" ABITEST_TYPE
                        "' has no interprocess events: its events exist in "
                        "one process only");
  }
  pthread_mutex_lock(&g_events.lock);
  slot* event = slot_create(&g_events, out);
  if (event != NULL) {
    event->device = device;
    event->flags = flags;
  }
  pthread_mutex_unlock(&g_events.lock);
  return event != NULL
             ? ACCEL_OK
             : abitest_fail(ACCEL_ERROR_OUT_OF_MEMORY, "no memory for another event");
}

static void destroy_event(void* ctx, uint64_t id) {
  (void)ctx;
  pthread_mutex_lock(&g_events.lock);
  slot* event = slot_find(&g_events, id);
  if (event != NULL) slot_destroy(&g_events, event); /* unknown ids are ignored */
  pthread_mutex_unlock(&g_events.lock);
}

static accel_status record_event(void* ctx, uint64_t id, accel_stream stream) {
  (void)ctx;
  if (!abitest_known_stream(stream)) return abitest_unknown_stream("record", stream);
  accel_status status = ACCEL_OK;
  pthread_mutex_lock(&g_events.lock);
  slot* event = slot_find(&g_events, id);
  if (event == NULL) {
    status = unknown_event("record", id);
  } else if (event->device != stream.device) {
    status = abitest_fail(
        ACCEL_ERROR_INVALID_ARGUMENT,
        "record: event %llu was created on '" ABITEST_TYPE
        ":%d', the stream is on device %d; record an event on its own device",
        (unsigned long long)id, (int)event->device, (int)stream.device);
  } else {
    event->recorded = 1;
    clock_gettime(CLOCK_MONOTONIC, &event->recorded_at);
  }
  pthread_mutex_unlock(&g_events.lock);
  return status;
}

/* Checks that `id` is live: the work it marks is done on a synchronous device. */
static accel_status require_event(const char* function, uint64_t id) {
  pthread_mutex_lock(&g_events.lock);
  const int live = slot_find(&g_events, id) != NULL;
  pthread_mutex_unlock(&g_events.lock);
  return live ? ACCEL_OK : unknown_event(function, id);
}

static accel_status block_stream(void* ctx, uint64_t id, accel_stream stream) {
  (void)ctx;
  if (!abitest_known_stream(stream)) return abitest_unknown_stream("block", stream);
  return require_event("block", id);
}

static accel_status query_event(void* ctx, uint64_t id, int32_t* done) {
  (void)ctx;
  *done = 1;
  return require_event("query", id);
}

static accel_status synchronize_event(void* ctx, uint64_t id) {
  (void)ctx;
  return require_event("synchronize", id);
}

static accel_status elapsed_ms(void* ctx, uint64_t start, uint64_t end, double* out) {
  (void)ctx;
  const uint64_t ids[2] = {start, end};
  struct timespec at[2] = {{0, 0}, {0, 0}};
  accel_status status = ACCEL_OK;
  pthread_mutex_lock(&g_events.lock);
  for (int i = 0; i < 2 && status == ACCEL_OK; ++i) {
    const slot* event = slot_find(&g_events, ids[i]);
    if (event == NULL) {
      status = unknown_event("elapsed_ms", ids[i]);
    } else if (!(event->flags & ACCEL_EVENT_ENABLE_TIMING)) {
      status =
          abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "elapsed_ms: event %llu was created without timing; create both "
                       "events with enable_timing",
                       (unsigned long long)ids[i]);
    } else if (!event->recorded) {
      status =
          abitest_fail(ACCEL_ERROR_DEVICE,
                       "elapsed_ms: event %llu has not been recorded; record both first",
                       (unsigned long long)ids[i]);
    } else {
      at[i] = event->recorded_at;
    }
  }
  pthread_mutex_unlock(&g_events.lock);
  if (status == ACCEL_OK) {
    *out = (double)(at[1].tv_sec - at[0].tv_sec) * 1e3 +
           (double)(at[1].tv_nsec - at[0].tv_nsec) / 1e6;
  }
  return status;
}

/* ---- graphs: a capture records nothing (the work ran as it was enqueued);
 * the phases and their errors are the contract's ---- */

enum { PHASE_EMPTY, PHASE_CAPTURING, PHASE_CAPTURED, PHASE_INSTANTIATED, PHASE_ENDED };
static const char* const kPhaseNames[] = {
    "is empty (not captured yet)", "is being captured", "is captured, not instantiated",
    "is instantiated", "was instantiated as its capture ended (no keep_graph)"};

int abitest_stream_is_capturing(accel_stream stream) {
  int capturing = 0;
  pthread_mutex_lock(&g_graphs.lock);
  for (uint32_t i = 0; i < g_graphs.count; ++i) {
    const slot* g = &g_graphs.slots[i];
    capturing |= g->live && g->phase == PHASE_CAPTURING && g->stream.id == stream.id &&
                 g->stream.device == stream.device;
  }
  pthread_mutex_unlock(&g_graphs.lock);
  return capturing;
}

/* Runs `step` on graph `id` under the lock when its phase is one of
 * `allowed` (a bit per phase; 0: any). */
typedef accel_status (*graph_step)(slot* graph, void* argument);
static accel_status with_graph(const char* function, uint64_t id, unsigned allowed,
                               graph_step step, void* argument) {
  accel_status status = ACCEL_OK;
  pthread_mutex_lock(&g_graphs.lock);
  slot* graph = slot_find(&g_graphs, id);
  if (graph == NULL) {
    status = abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: graph %llu is not a live graph of '" ABITEST_TYPE
                          "'; create one",
                          function, (unsigned long long)id);
  } else if (allowed != 0 && !(allowed & (1u << graph->phase))) {
    status = abitest_fail(
        ACCEL_ERROR_DEVICE,
        "%s: graph %llu of '" ABITEST_TYPE
        "' %s; a graph is captured, instantiated (keep_graph only), replayed; "
        "reset empties it",
        function, (unsigned long long)id, kPhaseNames[graph->phase]);
  } else {
    status = step(graph, argument);
  }
  pthread_mutex_unlock(&g_graphs.lock);
  return status;
}

static accel_status graph_create(void* ctx, int32_t keep_graph, uint64_t* out) {
  (void)ctx;
  pthread_mutex_lock(&g_graphs.lock);
  slot* graph = slot_create(&g_graphs, out);
  if (graph != NULL) graph->keep_graph = keep_graph != 0;
  pthread_mutex_unlock(&g_graphs.lock);
  return graph != NULL
             ? ACCEL_OK
             : abitest_fail(ACCEL_ERROR_OUT_OF_MEMORY, "no memory for another graph");
}

static accel_status destroy_step(slot* graph, void* argument) {
  (void)argument;
  slot_destroy(&g_graphs, graph);
  return ACCEL_OK;
}
static accel_status graph_destroy(void* ctx, uint64_t id) {
  (void)ctx;
  return with_graph("destroy", id, 0, destroy_step, NULL);
}

typedef struct capture_request {
  accel_stream stream;
} capture_request;
static accel_status capture_begin_step(slot* graph, void* argument) {
  const accel_stream stream = ((const capture_request*)argument)->stream;
  for (uint32_t i = 0; i < g_graphs.count; ++i) {
    const slot* other = &g_graphs.slots[i];
    if (other->live && other->phase == PHASE_CAPTURING && other->stream.id == stream.id &&
        other->stream.device == stream.device) {
      return abitest_fail(ACCEL_ERROR_DEVICE,
                          "capture_begin: stream %lld of '" ABITEST_TYPE
                          ":%d' is already being captured; end that capture first",
                          (long long)stream.id, (int)stream.device);
    }
  }
  graph->stream = stream;
  graph->phase = PHASE_CAPTURING;
  return ACCEL_OK;
}
static accel_status graph_capture_begin(void* ctx, uint64_t id, accel_stream stream,
                                        int32_t mode) {
  (void)ctx;
  if (mode != ACCEL_CAPTURE_GLOBAL && mode != ACCEL_CAPTURE_THREAD_LOCAL &&
      mode != ACCEL_CAPTURE_RELAXED) {
    return abitest_fail(ACCEL_ERROR_INVALID_ARGUMENT,
                        "capture_begin: unknown capture mode %d", (int)mode);
  }
  if (!abitest_known_stream(stream))
    return abitest_unknown_stream("capture_begin", stream);
  capture_request request = {stream};
  return with_graph("capture_begin", id, 1u << PHASE_EMPTY, capture_begin_step, &request);
}

static accel_status capture_end_step(slot* graph, void* argument) {
  (void)argument;
  /* Without keep_graph a graph is instantiated as its capture ends. */
  graph->phase = graph->keep_graph ? PHASE_CAPTURED : PHASE_ENDED;
  return ACCEL_OK;
}
static accel_status graph_capture_end(void* ctx, uint64_t id) {
  (void)ctx;
  return with_graph("capture_end", id, 1u << PHASE_CAPTURING, capture_end_step, NULL);
}

static accel_status instantiate_step(slot* graph, void* argument) {
  (void)argument;
  graph->phase = PHASE_INSTANTIATED;
  return ACCEL_OK;
}
static accel_status graph_instantiate(void* ctx, uint64_t id) {
  (void)ctx;
  return with_graph("instantiate", id, 1u << PHASE_CAPTURED | 1u << PHASE_INSTANTIATED,
                    instantiate_step, NULL);
}

static accel_status nothing_step(slot* graph, void* argument) {
  (void)graph, (void)argument;
  return ACCEL_OK;
}
static accel_status graph_replay(void* ctx, uint64_t id) {
  (void)ctx; /* the captured work ran during the capture: nothing to repeat */
  return with_graph("replay", id, 1u << PHASE_INSTANTIATED | 1u << PHASE_ENDED,
                    nothing_step, NULL);
}

static accel_status reset_step(slot* graph, void* argument) {
  (void)argument;
  graph->phase = PHASE_EMPTY;
  return ACCEL_OK;
}
static accel_status graph_reset(void* ctx, uint64_t id) {
  (void)ctx;
  return with_graph("reset", id, 0, reset_step, NULL);
}

#if ABITEST_HEADERS_HAVE_1_1
/* Counts its calls for the tests (abitest_prepare_replay_calls). */
static accel_status graph_prepare_replay(void* ctx, uint64_t id) {
  (void)ctx;
  atomic_fetch_add(&g_prepare_replay_calls, 1);
  return with_graph("prepare_replay", id, 1u << PHASE_INSTANTIATED | 1u << PHASE_ENDED,
                    nothing_step, NULL);
}
#endif

#ifdef ABITEST_NEXT_MINOR_MEMBER
static accel_status graph_next_minor(void* ctx, uint64_t id) {
  (void)ctx, (void)id;
  return abitest_fail(ACCEL_ERROR_INTERNAL, "a function the core cannot know was called");
}
#endif

void abitest_event_fns(accel_event_fns* events) {
  *events =
      (accel_event_fns){sizeof *events, create_event, destroy_event,     record_event,
                        block_stream,   query_event,  synchronize_event, elapsed_ms};
}

void abitest_graph_fns(accel_graph_fns* graphs) {
  memset(graphs, 0, sizeof *graphs);
  graphs->struct_size = sizeof *graphs;
  graphs->create = graph_create;
  graphs->destroy = graph_destroy;
  graphs->capture_begin = graph_capture_begin;
  graphs->capture_end = graph_capture_end;
  graphs->instantiate = graph_instantiate;
  graphs->replay = graph_replay;
  graphs->reset = graph_reset;
#if ABITEST_HEADERS_HAVE_1_1
  graphs->prepare_replay = graph_prepare_replay;
#endif
#ifdef ABITEST_NEXT_MINOR_MEMBER
  graphs->abitest_next_minor = graph_next_minor;
#endif
}
