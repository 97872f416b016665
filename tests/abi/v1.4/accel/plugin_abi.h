/* The plugin ABI: the C boundary between the accelhooks core (libaccel.so)
 * and a backend plugin. docs/plugin-abi.md has the rules; this header is the
 * contract. It compiles as C11 and as C++ and declares no C++ type: what
 * crosses is plain C, so a plugin built once, with any compiler and any
 * standard library, keeps loading in every later core of the same major
 * version.
 *
 * The shape:
 *  - A plugin exports one C function, accel_plugin_negotiate (the entry).
 *    The core calls it with an offer (the newest and the oldest plugin API
 *    version the core implements, and the core's services table); the
 *    plugin answers the version it will speak (the lower of the core's
 *    newest and its own newest) and refuses, with a status and a message,
 *    when that is below its own floor. The core refuses an answer outside
 *    its own range, naming both versions.
 *  - Every struct that crosses starts with its size (struct_size), set by the
 *    side that wrote it to the size that side was compiled with. Structs are
 *    only ever appended to: a reader reads a field only when the struct is
 *    long enough to hold it (ACCEL_ABI_HAS_FIELD) and the negotiated version
 *    has it (a member marked "since 1.x" counts only from 1.x on: a plugin
 *    built on newer headers that answered an older version may hand longer
 *    tables), and a field or function past either counts as "not
 *    provided". A
 *    struct one side fills for the other (the answer, device properties) is
 *    allocated by the side that reads it, with struct_size set to the
 *    reader's size; the writer writes only fields within that size.
 *  - Functions return an accel_status. A function that fails reports its
 *    message through the core's set_error service before returning the
 *    code; no exception crosses, and nothing that crosses is freed by the
 *    other side.
 *  - The core offers its services in one table (accel_core_services):
 *    registering device types and backends, error reporting, the blocks of
 *    its caches and the random generators' reservations. The caching device
 *    allocator and the pinned cache are the core's, built over the raw
 *    memory the plugin's backend table hands it. The plugin offers a table per
 *    capability group it declares (accel_backend); a declared group whose
 *    table is missing, or a table missing a function the group needs, is
 *    refused at registration with the group and the function named. A hook
 *    whose function the plugin's table does not have (an older plugin)
 *    behaves as an undeclared hook: NotSupported naming the backend, the
 *    hook and the plugin's API version; probes answer their benign default.
 *
 * Versions: ACCEL_PLUGIN_ABI_MAJOR.ACCEL_PLUGIN_ABI_MINOR. A minor version
 * appends fields or functions (each marked "since 1.x" below); a major
 * version may change anything and is refused by cores of another major.
 * 1.0  the first C release.
 * 1.1  accel_segment_fns.memory_info; accel_graph_fns.prepare_replay;
 *      accel_core_services.negotiated_version.
 * 1.2  accel_segment_fns.check_allocation, out_of_memory_advice;
 *      accel_core_services.fill_outputs,
 *      fill_host, retain_generator, release_generator, divert_allocations,
 *      use_block, release_block_use, current_device, current_stream.
 * 1.3  ACCEL_ERROR_NOT_IMPLEMENTED; the fill group (ACCEL_GROUP_FILL,
 *      accel_fill_fns, accel_backend.fill); accel_core_services.join_capture.
 * 1.4  accel_segment_fns.device_of; accel_low_fns.unavailable_reason.
 *
 * Thread-safety: the core may call any backend function from any thread at
 * any time, except where a comment says otherwise; plugins make that true.
 * The core's services are thread-safe.
 */
#ifndef ACCEL_PLUGIN_ABI_H
#define ACCEL_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ---- */

#define ACCEL_PLUGIN_ABI_MAJOR 1
#define ACCEL_PLUGIN_ABI_MINOR 4
/* One number per version, ordered as the versions are: (major << 16) | minor.
 * Not for #if (the casts): compare ACCEL_PLUGIN_ABI_MAJOR/MINOR there. */
#define ACCEL_PLUGIN_ABI_VERSION(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | (uint32_t)(minor)))
#define ACCEL_PLUGIN_ABI_CURRENT \
  ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, ACCEL_PLUGIN_ABI_MINOR)
#define ACCEL_PLUGIN_ABI_MAJOR_OF(version) ((uint32_t)(version) >> 16)
#define ACCEL_PLUGIN_ABI_MINOR_OF(version) ((uint32_t)(version)&0xffffu)

/* True when a struct of `size` bytes that starts like `type` holds `field`. */
#define ACCEL_ABI_HAS_FIELD(type, size, field) \
  ((size) >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ---- statuses ---- */

typedef int32_t accel_status;
#define ACCEL_OK 0
#define ACCEL_ERROR_INVALID_ARGUMENT 1 /* a bad index, id, pointer or value */
#define ACCEL_ERROR_NOT_SUPPORTED 2    /* the backend cannot do this */
#define ACCEL_ERROR_NOT_AVAILABLE 3    /* no driver or device */
#define ACCEL_ERROR_OUT_OF_MEMORY 4
#define ACCEL_ERROR_DEVICE 5    /* the device or driver failed or refused */
#define ACCEL_ERROR_VERSION 6   /* the negotiation found no common version */
#define ACCEL_ERROR_DUPLICATE 7 /* a device type already has a backend */
#define ACCEL_ERROR_INTERNAL 8  /* anything else (an exception of unknown type) */
/* since 1.3: a function of a group the backend declares that the plugin has
 * not written (a bug in the plugin: the core reports the hook as
 * unimplemented rather than unsupported). Returned only when the
 * negotiated version is 1.3 or later; to an older core, the same as
 * ACCEL_ERROR_NOT_SUPPORTED. */
#define ACCEL_ERROR_NOT_IMPLEMENTED 9

/* ---- opaque handles (the core's objects; never dereferenced by a plugin) ---- */

typedef struct accel_core accel_core;
typedef struct accel_generator accel_generator;
typedef struct accel_block_use accel_block_use; /* since 1.2 */

/* ---- capability groups (bits of accel_backend.groups) ---- */

#define ACCEL_GROUP_LOW (1u << 0)
#define ACCEL_GROUP_HIGH (1u << 1)
#define ACCEL_GROUP_DEVICE (1u << 2)
#define ACCEL_GROUP_STREAMS (1u << 3)
#define ACCEL_GROUP_EVENTS (1u << 4)
#define ACCEL_GROUP_MEMORY (1u << 5)
#define ACCEL_GROUP_MEMORY_HISTORY (1u << 6)
#define ACCEL_GROUP_GRAPHS (1u << 7)
#define ACCEL_GROUP_COPIES (1u << 8)
#define ACCEL_GROUP_FILL (1u << 9) /* since 1.3 */

/* Event flags (accel_event_fns.create). */
#define ACCEL_EVENT_ENABLE_TIMING (1u << 0)
#define ACCEL_EVENT_BLOCKING_SYNC (1u << 1)
#define ACCEL_EVENT_INTERPROCESS (1u << 2)

/* Capture modes (accel_graph_fns.capture_begin). */
#define ACCEL_CAPTURE_GLOBAL 0
#define ACCEL_CAPTURE_THREAD_LOCAL 1
#define ACCEL_CAPTURE_RELAXED 2

/* Kinds of random fill (accel_core_services.fill_host and fill_outputs):
 * the element type written and the distribution. */
#define ACCEL_FILL_BITS32 0          /* uint32_t, every bit random */
#define ACCEL_FILL_BITS64 1          /* uint64_t */
#define ACCEL_FILL_UNIFORM_FLOAT 2   /* float in [a, b) */
#define ACCEL_FILL_UNIFORM_DOUBLE 3  /* double in [a, b) */
#define ACCEL_FILL_NORMAL_FLOAT 4    /* float, mean a, standard deviation b */
#define ACCEL_FILL_NORMAL_DOUBLE 5   /* double */
#define ACCEL_FILL_BERNOULLI_U8 6    /* uint8_t, 1 with probability a */
#define ACCEL_FILL_BERNOULLI_FLOAT 7 /* float 0 or 1, 1 with probability a */

/* What use_block found (since 1.2). */
#define ACCEL_BLOCK_NONE 0
#define ACCEL_BLOCK_LIVE 1
#define ACCEL_BLOCK_FREED 2

/* A stream: the device it belongs to and the backend's id for it (the type
 * is the backend's own). */
typedef struct accel_stream {
  int64_t id;
  int8_t device;
} accel_stream;

/* A memory pool id (graph-private pools: first; user pools: second). */
typedef struct accel_mempool {
  uint64_t first;
  uint64_t second;
} accel_mempool;

/* Where text the core reads goes (showConfig): the plugin calls append with
 * pieces of the text, any number of times, during the call it was given to. */
typedef struct accel_text_sink {
  void* sink;
  void (*append)(void* sink, const char* text, size_t length);
} accel_text_sink;

/* Allocated by the core (the reader) with struct_size set to its size. */
typedef struct accel_device_properties {
  uint32_t struct_size;
  char name[256];              /* NUL-terminated */
  uint64_t total_memory_bytes; /* 0 if unknown */
  int32_t multiprocessor_count;
  int32_t compute_capability_major;
  int32_t compute_capability_minor;
  int32_t warp_size;
  int32_t max_threads_per_multiprocessor;
  uint64_t l2_cache_bytes;
  int32_t is_integrated;
  char uuid[64]; /* NUL-terminated; empty if none */
} accel_device_properties;

/* ---- the plugin's raw memory, under the core's caches ----
 * What the core caching allocator and pinned cache draw from: whole
 * segments (allocate_segment/free_segment are required), optionally page
 * mapping (page_size > 0) and events for asynchronous streams. The core
 * calls these holding the device's allocator lock, never re-entrantly; they
 * must not call back into the cache. */
typedef struct accel_segment_fns {
  uint32_t struct_size;
  /* A segment of exactly `bytes` on `device`; *out = NULL when the device is
   * out of memory (the cache frees what it holds and retries). */
  accel_status (*allocate_segment)(void* ctx, int8_t device, size_t bytes, void** out);
  void (*free_segment)(void* ctx, int8_t device, void* data, size_t bytes);
  /* Page mapping: all five or none. */
  size_t page_size;
  accel_status (*reserve_range)(void* ctx, int8_t device, size_t bytes, void** out);
  void (*release_range)(void* ctx, int8_t device, void* base, size_t bytes);
  /* *mapped = 0 when out of memory. */
  accel_status (*map_pages)(void* ctx, int8_t device, void* address, size_t bytes,
                            int32_t* mapped);
  void (*unmap_pages)(void* ctx, int8_t device, void* address, size_t bytes);
  /* Events for asynchronous streams: all five or none (none: a synchronous
   * device, whose work is done when the call that enqueued it returns). */
  accel_status (*record_event)(void* ctx, accel_stream stream, uint64_t* event);
  int32_t (*event_completed)(void* ctx, uint64_t event);
  accel_status (*stream_wait_event)(void* ctx, accel_stream stream, uint64_t event);
  void (*release_event)(void* ctx, uint64_t event);
  accel_status (*synchronize_event)(void* ctx, uint64_t event);
  /* since 1.1: the device's capacity and free bytes (both 0 when unknown),
   * for getMemoryInfo, setMemoryFraction and out-of-memory messages.
   * Optional; without it those hooks are NotSupported. */
  void (*memory_info)(void* ctx, int8_t device, uint64_t* total, uint64_t* free_bytes);
  /* since 1.2: asked before each allocation of the device allocator on a
   * device the plugin diverted (accel_core_services.divert_allocations);
   * any status but ACCEL_OK refuses the allocation with its message (a lost
   * device, an injected fault). Only read from device_memory. Optional. */
  accel_status (*check_allocation)(void* ctx, int8_t device, size_t bytes);
  /* since 1.2: what to do when the device's capacity is what refuses an
   * allocation (static text, "raise ACCEL_MYDEV_MEMORY"); the core adds it
   * to such an out-of-memory message. Only read from device_memory, and only
   * with memory_info. Optional (NULL). */
  const char* out_of_memory_advice;
  /* since 1.4: a pointer probe for memory of this table's kind that the
   * backend's runtime knows but the core's caches did not hand out (a
   * framework's own device allocation; host memory it page-locked or
   * registered itself). Returns 1 when `ptr` (interior pointers count)
   * lies in such memory: device memory for device_memory, with *device
   * set to its device; page-locked host memory for pinned_memory (*device
   * is then ignored: the core asks only whether it is pinned). Returns 0
   * otherwise (*device is then not read); any other answer counts as 0.
   * It may answer 1 for the segments it handed the core too (the core asks
   * its caches first). The core asks it from getDeviceFromPtr and
   * isPinnedPtr when its caches do not hold `ptr`, from any thread, also
   * before init (isPinnedPtr never initialises): it is a probe that never
   * fails (a message given through set_error is dropped), never blocks on
   * the device and never creates a device context (a runtime not started
   * yet knows no memory: 0). A device outside [0, the backend's device
   * count) is not trusted: the pointer counts as unknown. Optional (NULL:
   * the core's caches answer alone). */
  int32_t (*device_of)(void* ctx, const void* ptr, int8_t* device);
} accel_segment_fns;

/* ---- the plugin's tables, one per group ---- */

/* low (required). Probes answer without throwing and never create a device
 * context; a probe that fails answers 0. */
typedef struct accel_low_fns {
  uint32_t struct_size;
  int32_t (*is_built)(void* ctx);
  int32_t (*is_available)(void* ctx);
  int32_t (*device_count)(void* ctx);
  /* The calling thread's current device. Both, or neither: with neither, the
   * core keeps the current device per thread (0 until set). */
  accel_status (*get_current_device)(void* ctx, int8_t* out);
  accel_status (*set_current_device)(void* ctx, int8_t device);
  /* since 1.4: why is_available answers 0 (no driver, a driver too old, no
   * device), in one line appended to `sink` ("no NVIDIA driver: libcuda.so.1
   * not found"); nothing when the backend is available or cannot say. The
   * core puts it in the NotAvailable error of every hook that needs a
   * device of a backend without devices. A probe: from any thread, also
   * before init, never creates a device context. Optional (NULL: such hooks
   * say only that the backend reports no devices). */
  void (*unavailable_reason)(void* ctx, const accel_text_sink* sink);
} accel_low_fns;

/* high (required). Generators, the device and pinned allocators and the
 * pointer queries are the core's: Philox generators per device, and the
 * caches named in accel_backend. */
typedef struct accel_high_fns {
  uint32_t struct_size;
  /* Runs once before any hook that needs the driver; may fail and is then
   * retried by the next such hook. Required. */
  accel_status (*init)(void* ctx);
  /* Whether `device` has been initialised (a probe). Optional: without it,
   * the core answers whether the device allocated memory. */
  int32_t (*has_primary_context)(void* ctx, int8_t device);
} accel_high_fns;

/* device */
typedef struct accel_device_fns {
  uint32_t struct_size;
  accel_status (*synchronize)(void* ctx, int8_t device);
  accel_status (*show_config)(void* ctx, const accel_text_sink* sink);
  accel_status (*properties)(void* ctx, int8_t device, accel_device_properties* out);
} accel_device_fns;

/* streams. Ids are the backend's; stream.device is already checked. */
typedef struct accel_stream_fns {
  uint32_t struct_size;
  /* Current/set: both or neither (neither: the core keeps the current
   * stream per thread and per device, the default stream until set; the
   * default stream's id is then 0). */
  accel_status (*get_current)(void* ctx, int8_t device, int64_t* out);
  accel_status (*set_current)(void* ctx, accel_stream stream);
  accel_status (*get_default)(void* ctx, int8_t device, int64_t* out);
  accel_status (*create)(void* ctx, int8_t device, int32_t priority, int64_t* out);
  accel_status (*query)(void* ctx, accel_stream stream, int32_t* done);
  accel_status (*synchronize)(void* ctx, accel_stream stream);
  /* {lowest, greatest} for `device`; greater runs first; 0 is the default. */
  accel_status (*priority_range)(void* ctx, int8_t device, int32_t* lowest,
                                 int32_t* greatest);
} accel_stream_fns;

/* events */
typedef struct accel_event_fns {
  uint32_t struct_size;
  accel_status (*create)(void* ctx, int8_t device, uint32_t flags, uint64_t* out);
  void (*destroy)(void* ctx, uint64_t event);
  accel_status (*record)(void* ctx, uint64_t event, accel_stream stream);
  accel_status (*block)(void* ctx, uint64_t event, accel_stream stream);
  accel_status (*query)(void* ctx, uint64_t event, int32_t* done);
  accel_status (*synchronize)(void* ctx, uint64_t event);
  accel_status (*elapsed_ms)(void* ctx, uint64_t start, uint64_t end, double* out);
} accel_event_fns;

/* graphs. The core keeps the capture's private pool (allocations on the
 * capturing stream go to it between capture_begin and capture_end). */
typedef struct accel_graph_fns {
  uint32_t struct_size;
  accel_status (*create)(void* ctx, int32_t keep_graph, uint64_t* out);
  accel_status (*destroy)(void* ctx, uint64_t graph);
  accel_status (*capture_begin)(void* ctx, uint64_t graph, accel_stream stream,
                                int32_t mode);
  accel_status (*capture_end)(void* ctx, uint64_t graph);
  accel_status (*instantiate)(void* ctx, uint64_t graph);
  accel_status (*replay)(void* ctx, uint64_t graph);
  accel_status (*reset)(void* ctx, uint64_t graph);
  /* since 1.1: called before each replay, so that captured random draws can
   * take their next offsets. Optional. */
  accel_status (*prepare_replay)(void* ctx, uint64_t graph);
} accel_graph_fns;

/* copies. Ranges are already checked against the core's caches; the core
 * keeps pinned host memory from its next owner until the stream has passed
 * the copy. */
typedef struct accel_copy_fns {
  uint32_t struct_size;
  accel_status (*host_to_device)(void* ctx, void* dst, const void* src, size_t bytes,
                                 accel_stream stream);
  accel_status (*device_to_host)(void* ctx, void* dst, const void* src, size_t bytes,
                                 accel_stream stream);
  accel_status (*device_to_device)(void* ctx, void* dst, const void* src, size_t bytes,
                                   accel_stream stream);
} accel_copy_fns;

/* since 1.3: random fills of device memory. The core has checked the stream
 * (a stream of this backend's device), the kind, a and b (fill_host's
 * rules), and that [data, data + count elements) lies in one live block of
 * the stream's device (count > 0); `generator` is never null (the device's
 * default generator when the caller named none).
 * fill enqueues on `stream` a fill of `count` elements of `kind` at `data`,
 * bit for bit what fill_host writes from the same seed and offset. Outside a
 * capture it reserves its draw (reserve_philox, fill_outputs(kind, count)
 * outputs) before it returns, so fills from one generator get disjoint parts
 * of its stream in the order they were called; on a stream being captured
 * into a graph it reserves nothing then, and each replay draws anew (keep the
 * generator with retain_generator for as long as the graph needs it). */
typedef struct accel_fill_fns {
  uint32_t struct_size;
  accel_status (*fill)(void* ctx, accel_stream stream, int32_t kind, void* data,
                       uint64_t count, double a, double b, accel_generator* generator);
} accel_fill_fns;

/* accel_backend.flags: the device finishes its work before the call that
 * enqueues it returns, and the host can address its memory (a simulator, a
 * device over host memory, a device whose driver calls block). The core
 * then provides the current device, the streams and events groups (always
 * declared for such a backend: default stream 0, fresh stream ids, events
 * complete when recorded), and, when the backend declares them, the graphs
 * group (captures record the copies and replay them), the copies
 * (memcpy, with the ranges checked against the core's caches) and, since
 * 1.3, the fill group (fill_host into the memory, outside captures); the
 * plugin's low current device functions, its device table's synchronize
 * and its streams, events, graphs and copies tables are not read (NULL is
 * fine). The device count is asked once, at
 * registration: such a device's count is its configuration. */
#define ACCEL_BACKEND_SYNCHRONOUS (1u << 0)

/* One backend, registered with accel_core_services.register_backend. The
 * core reads it during that call and keeps copies of the tables (which may
 * be temporaries); the ctx pointers are passed to every function and must
 * live for the rest of the process.
 * Memory: the core builds a caching device allocator over device_memory
 * (and a pinned host memory cache over pinned_memory) once init succeeded,
 * for deviceCount() devices, with the settings of ACCEL_ALLOC_CONF. From
 * them it answers getDeviceAllocator, getPinnedMemoryAllocator, isPinnedPtr,
 * getDeviceFromPtr, and the memory and memory_history groups. */
typedef struct accel_backend {
  uint32_t struct_size;
  int32_t device_type; /* from register_device_type */
  uint32_t groups;     /* ACCEL_GROUP_* bits; LOW and HIGH are required */
  uint32_t flags;      /* ACCEL_BACKEND_* bits */
  void* ctx;
  const accel_low_fns* low;
  const accel_high_fns* high;
  const accel_device_fns* device;
  const accel_stream_fns* streams;
  const accel_event_fns* events;
  const accel_graph_fns* graphs;
  const accel_copy_fns* copies;
  /* The device's raw memory; required. */
  const accel_segment_fns* device_memory;
  void* device_memory_ctx;
  /* Page-locked host memory (served as device 0); required, as the high
   * group's getPinnedMemoryAllocator is. A device without page-locked
   * memory of its own hands ordinary host memory. */
  const accel_segment_fns* pinned_memory;
  void* pinned_memory_ctx;
  /* since 1.3: the fill group's table (required when it is declared,
   * unless the backend is ACCEL_BACKEND_SYNCHRONOUS). */
  const accel_fill_fns* fill;
} accel_backend;

/* ---- the core's services ---- */

typedef struct accel_core_services {
  uint32_t struct_size;
  /* The message of the status the calling thread is about to return from a
   * backend function (copied; the last one before the return counts). */
  void (*set_error)(accel_core* core, accel_status code, const char* message);
  /* Registers (or finds) the device type `name` and returns its id. */
  accel_status (*register_device_type)(accel_core* core, const char* name, int32_t* type);
  /* Registers a backend (only during register_backends). */
  accel_status (*register_backend)(accel_core* core, const accel_backend* backend);
  /* Which device block of the backend of `device_type` holds `ptr`
   * (interior pointers count): its device, and the block's start and size;
   * ACCEL_ERROR_INVALID_ARGUMENT when no live block does. */
  accel_status (*find_device_block)(accel_core* core, int32_t device_type,
                                    const void* ptr, int8_t* device, void** base,
                                    size_t* bytes);
  /* The default generator of `device` of the backend's type. */
  accel_status (*default_generator)(accel_core* core, int32_t device_type, int8_t device,
                                    accel_generator** out);
  /* Reserves `count` Philox outputs of `generator`: the seed and the offset
   * the draws start at (the generator moves past them). */
  accel_status (*reserve_philox)(accel_generator* generator, uint64_t count,
                                 uint64_t* seed, uint64_t* offset);
  /* since 1.1: the version this plugin and the core agreed on. */
  uint32_t (*negotiated_version)(accel_core* core);
  /* since 1.2: how many Philox outputs a fill of `count` elements of `kind`
   * (ACCEL_FILL_*) consumes; 0 for an unknown kind. */
  uint64_t (*fill_outputs)(int32_t kind, uint64_t count);
  /* since 1.2: the core's reference fill: writes `count` elements of `kind`
   * to host-addressable `data`, drawn from the Philox stream of `seed` at
   * `offset` (what every backend's device fill writes, bit for bit). With
   * count 0 it checks a and b only. ACCEL_ERROR_INVALID_ARGUMENT for a bad
   * kind, a or b (its message says which). Runs on the calling thread. */
  accel_status (*fill_host)(accel_core* core, int32_t kind, void* data, uint64_t count,
                            double a, double b, uint64_t seed, uint64_t offset);
  /* since 1.2: a reference to `generator` (default or not) that stays
   * valid until release_generator, for a draw reserved later (a captured
   * fill replayed). */
  accel_status (*retain_generator)(accel_generator* generator, accel_generator** out);
  /* Releases a handle retain_generator gave (only those: a default
   * generator's handle is the core's for the process). */
  void (*release_generator)(accel_generator* generator);
  /* since 1.2: while `on` is nonzero, each allocation of the device
   * allocator of `device` asks device_memory's check_allocation first;
   * off (the start), allocations do not cross the boundary for it. */
  accel_status (*divert_allocations)(accel_core* core, int32_t device_type, int8_t device,
                                     int32_t on);
  /* since 1.2: a use of the block of the device cache that holds `ptr`, for
   * work that names memory its owner may free meanwhile (queued, running or
   * captured): while the use lives, a free of the block waits, and the block
   * still counts as allocated. Returns ACCEL_BLOCK_LIVE with *use (release
   * it with release_block_use) and the block's device, first byte and the
   * bytes its owner asked for; ACCEL_BLOCK_FREED when the block holding ptr
   * was freed already (a use after free; nothing is taken); ACCEL_BLOCK_NONE
   * when no block holds ptr (or the arguments are bad). Never fails
   * otherwise; thread-safe. */
  int32_t (*use_block)(accel_core* core, int32_t device_type, const void* ptr,
                       accel_block_use** use, int8_t* device, void** base,
                       size_t* requested);
  void (*release_block_use)(accel_block_use* use);
  /* since 1.2: the calling thread's current device, and its current stream
   * of `device`, as the core keeps them for a backend that does not keep
   * them itself (a graph replayed on the current stream). */
  accel_status (*current_device)(accel_core* core, int32_t device_type, int8_t* device);
  accel_status (*current_stream)(accel_core* core, int32_t device_type, int8_t device,
                                 int64_t* stream);
  /* since 1.3: `joined`, a stream of the same device as `capturing`, has
   * joined the capture that `capturing` is being captured into (it waited
   * on an event recorded on a capturing stream, as CUDA's stream capture
   * forks): until that capture ends, the device allocator sends
   * allocations on `joined` to the capture's private pool too. Joining
   * twice is one join. ACCEL_ERROR_INVALID_ARGUMENT when `capturing` is
   * not being captured through the core's graphs group, or the streams are
   * of different devices or the same stream; ACCEL_ERROR_NOT_SUPPORTED for
   * a synchronous backend (its captures hold one stream). */
  accel_status (*join_capture)(accel_core* core, int32_t device_type,
                               accel_stream capturing, accel_stream joined);
} accel_core_services;

/* ---- the entry ---- */

typedef struct accel_core_offer {
  uint32_t struct_size;
  uint32_t newest_version;  /* ACCEL_PLUGIN_ABI_VERSION the core implements */
  uint32_t oldest_version;  /* the oldest it still loads */
  const char* core_version; /* "0.1.0": for messages */
  accel_core* core;
  const accel_core_services* services;
} accel_core_offer;

/* Allocated by the core with struct_size set to its size. */
typedef struct accel_plugin_answer {
  uint32_t struct_size;
  /* The version the plugin speaks: at most the offer's newest and the
   * plugin's own newest, at least the plugin's floor. */
  uint32_t version;
  /* The newest version the plugin's headers know, and the oldest it accepts
   * (for the core's messages and the load report). */
  uint32_t plugin_newest_version;
  uint32_t plugin_oldest_version;
  const char* name;         /* static; "openreg" */
  const char* version_text; /* static; the plugin's own version, "0.1.0" */
  /* Registers the plugin's device types and backends through the services;
   * called once, after the negotiation succeeded. A status other than
   * ACCEL_OK drops everything it registered. */
  accel_status (*register_backends)(accel_core* core);
} accel_plugin_answer;

/* The entry every plugin exports. Returns ACCEL_OK with the answer filled,
 * or ACCEL_ERROR_VERSION (the offer is below the plugin's floor; the answer's
 * plugin_*_version fields say what it needs) or another status, with a
 * message through offer->services->set_error. May be called more than once. */
typedef accel_status (*accel_plugin_negotiate_fn)(const accel_core_offer* offer,
                                                  accel_plugin_answer* answer);
#define ACCEL_PLUGIN_ENTRY_NAME "accel_plugin_negotiate"

#if defined(_WIN32)
#define ACCEL_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ACCEL_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The entry, as a plugin defines it (declared here so that the compiler
 * checks the definition against the contract). */
ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(const accel_core_offer* offer,
                                                        accel_plugin_answer* answer);

/* ---- what the core exports in C ---- */

/* The plugin API range this core implements. Never fails; thread-safe. */
void accel_core_plugin_abi_range(uint32_t* oldest, uint32_t* newest);

/* Loads a plugin that is linked into the program (or found by the host by
 * other means) through its entry, as the loader would load a file: the same
 * negotiation and checks; `origin` names it in the load report. Returns
 * ACCEL_OK when its backends are registered; otherwise ACCEL_ERROR_VERSION,
 * ACCEL_ERROR_DUPLICATE, ACCEL_ERROR_INVALID_ARGUMENT (a null entry) or
 * ACCEL_ERROR_INTERNAL (the plugin failed), and the load report has the
 * reason. Never throws. Thread-safe: loads are serialised with the loader's;
 * called from inside a load (a plugin's register_backends) it is refused. */
accel_status accel_core_load_entry(accel_plugin_negotiate_fn entry, const char* origin);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PLUGIN_ABI_H */
