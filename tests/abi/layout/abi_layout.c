/* Every member and constant of accel/plugin_abi.h as the headers of one
 * build declare them (ABI_LAYOUT_NAME names the result). A member a later
 * version appended is listed under that version's #if, so that the file
 * compiles against every frozen header. A member removed from the current
 * header fails this file's build. */
#include "abi_layout.h"

#include "accel/plugin_abi.h"

#define MEMBER(type, member) \
  { #type "." #member, offsetof(type, member), sizeof(((type*)0)->member) }
#define CONSTANT(name) \
  { #name, (uint64_t)(name) }
#define SINCE(major, minor)            \
  (ACCEL_PLUGIN_ABI_MAJOR > (major) || \
   (ACCEL_PLUGIN_ABI_MAJOR == (major) && ACCEL_PLUGIN_ABI_MINOR >= (minor)))

static const abi_layout_member kMembers[] = {
    MEMBER(accel_stream, id),
    MEMBER(accel_stream, device),
    MEMBER(accel_mempool, first),
    MEMBER(accel_mempool, second),
    MEMBER(accel_text_sink, sink),
    MEMBER(accel_text_sink, append),
    MEMBER(accel_device_properties, struct_size),
    MEMBER(accel_device_properties, name),
    MEMBER(accel_device_properties, total_memory_bytes),
    MEMBER(accel_device_properties, multiprocessor_count),
    MEMBER(accel_device_properties, compute_capability_major),
    MEMBER(accel_device_properties, compute_capability_minor),
    MEMBER(accel_device_properties, warp_size),
    MEMBER(accel_device_properties, max_threads_per_multiprocessor),
    MEMBER(accel_device_properties, l2_cache_bytes),
    MEMBER(accel_device_properties, is_integrated),
    MEMBER(accel_device_properties, uuid),
    MEMBER(accel_segment_fns, struct_size),
    MEMBER(accel_segment_fns, allocate_segment),
    MEMBER(accel_segment_fns, free_segment),
    MEMBER(accel_segment_fns, page_size),
    MEMBER(accel_segment_fns, reserve_range),
    MEMBER(accel_segment_fns, release_range),
    MEMBER(accel_segment_fns, map_pages),
    MEMBER(accel_segment_fns, unmap_pages),
    MEMBER(accel_segment_fns, record_event),
    MEMBER(accel_segment_fns, event_completed),
    MEMBER(accel_segment_fns, stream_wait_event),
    MEMBER(accel_segment_fns, release_event),
    MEMBER(accel_segment_fns, synchronize_event),
#if SINCE(1, 1)
    MEMBER(accel_segment_fns, memory_info),
#endif
#if SINCE(1, 2)
    MEMBER(accel_segment_fns, check_allocation),
    MEMBER(accel_segment_fns, out_of_memory_advice),
#endif
#if SINCE(1, 4)
    MEMBER(accel_segment_fns, device_of),
#endif
    MEMBER(accel_low_fns, struct_size),
    MEMBER(accel_low_fns, is_built),
    MEMBER(accel_low_fns, is_available),
    MEMBER(accel_low_fns, device_count),
    MEMBER(accel_low_fns, get_current_device),
    MEMBER(accel_low_fns, set_current_device),
#if SINCE(1, 4)
    MEMBER(accel_low_fns, unavailable_reason),
#endif
    MEMBER(accel_high_fns, struct_size),
    MEMBER(accel_high_fns, init),
    MEMBER(accel_high_fns, has_primary_context),
    MEMBER(accel_device_fns, struct_size),
    MEMBER(accel_device_fns, synchronize),
    MEMBER(accel_device_fns, show_config),
    MEMBER(accel_device_fns, properties),
    MEMBER(accel_stream_fns, struct_size),
    MEMBER(accel_stream_fns, get_current),
    MEMBER(accel_stream_fns, set_current),
    MEMBER(accel_stream_fns, get_default),
    MEMBER(accel_stream_fns, create),
    MEMBER(accel_stream_fns, query),
    MEMBER(accel_stream_fns, synchronize),
    MEMBER(accel_stream_fns, priority_range),
    MEMBER(accel_event_fns, struct_size),
    MEMBER(accel_event_fns, create),
    MEMBER(accel_event_fns, destroy),
    MEMBER(accel_event_fns, record),
    MEMBER(accel_event_fns, block),
    MEMBER(accel_event_fns, query),
    MEMBER(accel_event_fns, synchronize),
    MEMBER(accel_event_fns, elapsed_ms),
    MEMBER(accel_graph_fns, struct_size),
    MEMBER(accel_graph_fns, create),
    MEMBER(accel_graph_fns, destroy),
    MEMBER(accel_graph_fns, capture_begin),
    MEMBER(accel_graph_fns, capture_end),
    MEMBER(accel_graph_fns, instantiate),
    MEMBER(accel_graph_fns, replay),
    MEMBER(accel_graph_fns, reset),
#if SINCE(1, 1)
    MEMBER(accel_graph_fns, prepare_replay),
#endif
    MEMBER(accel_copy_fns, struct_size),
    MEMBER(accel_copy_fns, host_to_device),
    MEMBER(accel_copy_fns, device_to_host),
    MEMBER(accel_copy_fns, device_to_device),
    MEMBER(accel_backend, struct_size),
    MEMBER(accel_backend, device_type),
    MEMBER(accel_backend, groups),
    MEMBER(accel_backend, ctx),
    MEMBER(accel_backend, low),
    MEMBER(accel_backend, high),
    MEMBER(accel_backend, device),
    MEMBER(accel_backend, streams),
    MEMBER(accel_backend, events),
    MEMBER(accel_backend, graphs),
    MEMBER(accel_backend, copies),
    MEMBER(accel_backend, device_memory),
    MEMBER(accel_backend, device_memory_ctx),
    MEMBER(accel_backend, pinned_memory),
    MEMBER(accel_backend, pinned_memory_ctx),
#if SINCE(1, 3)
    MEMBER(accel_backend, fill),
    MEMBER(accel_fill_fns, struct_size),
    MEMBER(accel_fill_fns, fill),
#endif
    MEMBER(accel_core_services, struct_size),
    MEMBER(accel_core_services, set_error),
    MEMBER(accel_core_services, register_device_type),
    MEMBER(accel_core_services, register_backend),
    MEMBER(accel_core_services, find_device_block),
    MEMBER(accel_core_services, default_generator),
    MEMBER(accel_core_services, reserve_philox),
#if SINCE(1, 1)
    MEMBER(accel_core_services, negotiated_version),
#endif
#if SINCE(1, 2)
    MEMBER(accel_core_services, fill_outputs),
    MEMBER(accel_core_services, fill_host),
    MEMBER(accel_core_services, retain_generator),
    MEMBER(accel_core_services, release_generator),
    MEMBER(accel_core_services, divert_allocations),
    MEMBER(accel_core_services, use_block),
    MEMBER(accel_core_services, release_block_use),
    MEMBER(accel_core_services, current_device),
    MEMBER(accel_core_services, current_stream),
#endif
#if SINCE(1, 3)
    MEMBER(accel_core_services, join_capture),
#endif
    MEMBER(accel_core_offer, struct_size),
    MEMBER(accel_core_offer, newest_version),
    MEMBER(accel_core_offer, oldest_version),
    MEMBER(accel_core_offer, core_version),
    MEMBER(accel_core_offer, core),
    MEMBER(accel_core_offer, services),
    MEMBER(accel_plugin_answer, struct_size),
    MEMBER(accel_plugin_answer, version),
    MEMBER(accel_plugin_answer, plugin_newest_version),
    MEMBER(accel_plugin_answer, plugin_oldest_version),
    MEMBER(accel_plugin_answer, name),
    MEMBER(accel_plugin_answer, version_text),
    MEMBER(accel_plugin_answer, register_backends),
};

static const abi_layout_constant kConstants[] = {
    CONSTANT(ACCEL_PLUGIN_ABI_MAJOR),
    CONSTANT(ACCEL_PLUGIN_ABI_VERSION(3, 5)),
    CONSTANT(ACCEL_OK),
    CONSTANT(ACCEL_ERROR_INVALID_ARGUMENT),
    CONSTANT(ACCEL_ERROR_NOT_SUPPORTED),
    CONSTANT(ACCEL_ERROR_NOT_AVAILABLE),
    CONSTANT(ACCEL_ERROR_OUT_OF_MEMORY),
    CONSTANT(ACCEL_ERROR_DEVICE),
    CONSTANT(ACCEL_ERROR_VERSION),
    CONSTANT(ACCEL_ERROR_DUPLICATE),
    CONSTANT(ACCEL_ERROR_INTERNAL),
    CONSTANT(ACCEL_GROUP_LOW),
    CONSTANT(ACCEL_GROUP_HIGH),
    CONSTANT(ACCEL_GROUP_DEVICE),
    CONSTANT(ACCEL_GROUP_STREAMS),
    CONSTANT(ACCEL_GROUP_EVENTS),
    CONSTANT(ACCEL_GROUP_MEMORY),
    CONSTANT(ACCEL_GROUP_MEMORY_HISTORY),
    CONSTANT(ACCEL_GROUP_GRAPHS),
    CONSTANT(ACCEL_GROUP_COPIES),
    CONSTANT(ACCEL_EVENT_ENABLE_TIMING),
    CONSTANT(ACCEL_EVENT_BLOCKING_SYNC),
    CONSTANT(ACCEL_EVENT_INTERPROCESS),
    CONSTANT(ACCEL_CAPTURE_GLOBAL),
    CONSTANT(ACCEL_CAPTURE_THREAD_LOCAL),
    CONSTANT(ACCEL_CAPTURE_RELAXED),
    CONSTANT(sizeof(accel_status)),
#if SINCE(1, 2)
    CONSTANT(ACCEL_FILL_BITS32),
    CONSTANT(ACCEL_FILL_BITS64),
    CONSTANT(ACCEL_FILL_UNIFORM_FLOAT),
    CONSTANT(ACCEL_FILL_UNIFORM_DOUBLE),
    CONSTANT(ACCEL_FILL_NORMAL_FLOAT),
    CONSTANT(ACCEL_FILL_NORMAL_DOUBLE),
    CONSTANT(ACCEL_FILL_BERNOULLI_U8),
    CONSTANT(ACCEL_FILL_BERNOULLI_FLOAT),
    CONSTANT(ACCEL_BLOCK_NONE),
    CONSTANT(ACCEL_BLOCK_LIVE),
    CONSTANT(ACCEL_BLOCK_FREED),
#endif
#if SINCE(1, 3)
    CONSTANT(ACCEL_ERROR_NOT_IMPLEMENTED),
    CONSTANT(ACCEL_GROUP_FILL),
#endif
};

const abi_layout ABI_LAYOUT_NAME = {ACCEL_PLUGIN_ABI_CURRENT,
                                    kMembers,
                                    sizeof kMembers / sizeof kMembers[0],
                                    kConstants,
                                    sizeof kConstants / sizeof kConstants[0],
                                    ACCEL_PLUGIN_ENTRY_NAME};
