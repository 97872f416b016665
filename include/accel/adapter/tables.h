// Internal to the plugin adapter (accel/plugin_adapter.h): the C tables of
// a registered backend, each function a trampoline into the C++ backend
// that catches what it throws and hands the core a status and a message.
//
// Thread-safety: the trampolines are as thread-safe as the backend.
#ifndef ACCEL_ADAPTER_TABLES_H
#define ACCEL_ADAPTER_TABLES_H

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "accel/adapter/backend.h"
#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"
#include "accel/plugin_abi.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter::detail {

// The core this plugin negotiated with, for the boundary's error reports.
struct Link {
  accel_core* core = nullptr;
  const accel_core_services* services = nullptr;
  std::uint32_t version = 0;  // the version the plugin answered
};
// One per plugin: this header is compiled into one plugin, and its entry
// sets the link once, before anything else runs.
inline Link& link() noexcept {
  static Link the_link;
  return the_link;
}

inline accel_status report(accel_status status, const char* message) noexcept {
  const Link& l = link();
  // A core older than 1.3 does not know the status: to it, an unwritten
  // function is one the backend cannot serve.
  if (status == ACCEL_ERROR_NOT_IMPLEMENTED &&
      l.version < ACCEL_PLUGIN_ABI_VERSION(1, 3)) {
    status = ACCEL_ERROR_NOT_SUPPORTED;
  }
  if (l.services != nullptr && l.services->set_error != nullptr)
    l.services->set_error(l.core, status, message);
  return status;
}

// Runs `body`, turning what it throws into a status and a message.
template <typename Body>
accel_status guard(Body&& body) noexcept {
  try {
    body();
    return ACCEL_OK;
  } catch (const CoreRefusal& e) {
    return e.status();
  } catch (const Failure& e) {
    return report(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return report(ACCEL_ERROR_OUT_OF_MEMORY, "out of host memory in the plugin");
  } catch (const std::exception& e) {
    return report(ACCEL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return report(ACCEL_ERROR_INTERNAL, "the plugin threw an unknown exception");
  }
}

// A probe's answer: what `body` returns, or `fallback` when it throws.
template <typename T, typename Body>
T probe(T fallback, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return fallback;
  }
}

inline void copyText(char* out, std::size_t capacity, const std::string& text) noexcept {
  const std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// One registered backend: what the tables' ctx points to.
struct Registered {
  std::unique_ptr<BackendBase> owner;
  BackendBase* base = nullptr;
  Backend* async = nullptr;  // null for a synchronous backend
  SynchronousBackend* sync = nullptr;
};

inline BackendBase& baseOf(void* ctx) noexcept {
  return *static_cast<Registered*>(ctx)->base;
}
inline Backend& asyncOf(void* ctx) noexcept {
  return *static_cast<Registered*>(ctx)->async;
}
inline Memory& memoryOf(void* ctx) noexcept { return *static_cast<Memory*>(ctx); }

// The functions both kinds of backend share.
struct Shared {
  static int32_t isBuilt(void* ctx) noexcept {
    return probe(0, [&] { return baseOf(ctx).isBuilt() ? 1 : 0; });
  }
  static int32_t isAvailable(void* ctx) noexcept {
    return probe(0, [&] { return baseOf(ctx).isAvailable() ? 1 : 0; });
  }
  static int32_t deviceCount(void* ctx) noexcept {
    return probe(0, [&] {
      const Registered& r = *static_cast<Registered*>(ctx);
      const int count =
          r.async != nullptr ? r.async->deviceCount() : r.sync->deviceCount();
      return count < 0 ? 0 : count;
    });
  }
  static accel_status init(void* ctx) noexcept {
    return guard([&] { baseOf(ctx).init(); });
  }
  // low.unavailable_reason (since 1.4; a core older than that never asks).
  static void unavailableReason(void* ctx, const accel_text_sink* sink) noexcept {
    try {
      const std::string text = baseOf(ctx).unavailableReason();
      if (!text.empty()) sink->append(sink->sink, text.data(), text.size());
    } catch (...) {
      // A probe: a backend that throws says nothing.
    }
  }
  static accel_status showConfig(void* ctx, const accel_text_sink* sink) noexcept {
    return guard([&] {
      const std::string text = baseOf(ctx).showConfig();
      sink->append(sink->sink, text.data(), text.size());
    });
  }
  static accel_status properties(void* ctx, int8_t device,
                                 accel_device_properties* out) noexcept {
    return guard([&] {
      const Properties p = baseOf(ctx).properties(device);
      const std::uint32_t size = out->struct_size;
      // Only what the core's struct holds (it may be an older core's).
#define ACCEL_ADAPTER_SET_(field, value) \
  if (ACCEL_ABI_HAS_FIELD(accel_device_properties, size, field)) out->field = (value)
      if (ACCEL_ABI_HAS_FIELD(accel_device_properties, size, name))
        copyText(out->name, sizeof(out->name), p.name);
      ACCEL_ADAPTER_SET_(total_memory_bytes, p.total_memory_bytes);
      ACCEL_ADAPTER_SET_(multiprocessor_count, p.multiprocessor_count);
      ACCEL_ADAPTER_SET_(compute_capability_major, p.compute_capability_major);
      ACCEL_ADAPTER_SET_(compute_capability_minor, p.compute_capability_minor);
      ACCEL_ADAPTER_SET_(warp_size, p.warp_size);
      ACCEL_ADAPTER_SET_(max_threads_per_multiprocessor,
                         p.max_threads_per_multiprocessor);
      ACCEL_ADAPTER_SET_(l2_cache_bytes, p.l2_cache_bytes);
      ACCEL_ADAPTER_SET_(is_integrated, p.is_integrated ? 1 : 0);
#undef ACCEL_ADAPTER_SET_
      if (ACCEL_ABI_HAS_FIELD(accel_device_properties, size, uuid))
        copyText(out->uuid, sizeof(out->uuid), p.uuid);
    });
  }
};

// A Memory's segment table (its ctx is the Memory).
inline accel_segment_fns segmentFns(Memory& memory) {
  accel_segment_fns fns{};
  fns.struct_size = sizeof(fns);
  fns.allocate_segment = [](void* ctx, int8_t device, size_t bytes,
                            void** out) noexcept -> accel_status {
    return guard([&] { *out = memoryOf(ctx).allocate(device, bytes); });
  };
  fns.free_segment = [](void* ctx, int8_t device, void* data, size_t bytes) noexcept {
    memoryOf(ctx).free(device, data, bytes);
  };
  fns.memory_info = [](void* ctx, int8_t device, uint64_t* total,
                       uint64_t* free_bytes) noexcept {
    const MemoryInfo info = memoryOf(ctx).info(device);
    *total = info.total_bytes;
    *free_bytes = info.free_bytes;
  };
  fns.check_allocation = [](void* ctx, int8_t device, size_t bytes) noexcept {
    return guard([&] { memoryOf(ctx).checkAllocation(device, bytes); });
  };
  fns.out_of_memory_advice = memory.outOfMemoryAdvice();
  // Always filled: the default knows nothing, and the core then answers
  // from its caches alone, as without the function.
  fns.device_of = [](void* ctx, const void* ptr, int8_t* device) noexcept -> int32_t {
    return probe(0, [&] {
      const std::optional<std::int8_t> known = memoryOf(ctx).deviceOf(ptr);
      if (!known) return 0;
      *device = *known;
      return 1;
    });
  };
  if (PageMapping* pages = memory.pages()) {
    fns.page_size = pages->pageSize();
    fns.reserve_range = [](void* ctx, int8_t device, size_t bytes,
                           void** out) noexcept -> accel_status {
      return guard([&] { *out = memoryOf(ctx).pages()->reserve(device, bytes); });
    };
    fns.release_range = [](void* ctx, int8_t device, void* base, size_t bytes) noexcept {
      memoryOf(ctx).pages()->release(device, base, bytes);
    };
    fns.map_pages = [](void* ctx, int8_t device, void* address, size_t bytes,
                       int32_t* mapped) noexcept -> accel_status {
      return guard(
          [&] { *mapped = memoryOf(ctx).pages()->map(device, address, bytes) ? 1 : 0; });
    };
    fns.unmap_pages = [](void* ctx, int8_t device, void* address, size_t bytes) noexcept {
      memoryOf(ctx).pages()->unmap(device, address, bytes);
    };
  }
  if (memory.streamEvents() != nullptr) {
    fns.record_event = [](void* ctx, accel_stream stream,
                          uint64_t* event) noexcept -> accel_status {
      return guard([&] { *event = memoryOf(ctx).streamEvents()->record(stream); });
    };
    fns.event_completed = [](void* ctx, uint64_t event) noexcept -> int32_t {
      return memoryOf(ctx).streamEvents()->completed(event) ? 1 : 0;
    };
    fns.stream_wait_event = [](void* ctx, accel_stream stream,
                               uint64_t event) noexcept -> accel_status {
      return guard([&] { memoryOf(ctx).streamEvents()->wait(stream, event); });
    };
    fns.release_event = [](void* ctx, uint64_t event) noexcept {
      memoryOf(ctx).streamEvents()->release(event);
    };
    fns.synchronize_event = [](void* ctx, uint64_t event) noexcept -> accel_status {
      return guard([&] { memoryOf(ctx).streamEvents()->synchronize(event); });
    };
  }
  return fns;
}

// The tables of an asynchronous backend; the core copies them at
// registration, so they live on the registering thread's stack.
struct AsyncTables {
  accel_low_fns low{};
  accel_high_fns high{};
  accel_device_fns device{};
  accel_stream_fns streams{};
  accel_event_fns events{};
  accel_graph_fns graphs{};
  accel_copy_fns copies{};
  accel_fill_fns fill{};

  explicit AsyncTables(const Backend& backend) {
    low.struct_size = sizeof(low);
    low.is_built = &Shared::isBuilt;
    low.is_available = &Shared::isAvailable;
    low.unavailable_reason = &Shared::unavailableReason;
    low.device_count = &Shared::deviceCount;
    high.struct_size = sizeof(high);
    high.init = &Shared::init;
    device.struct_size = sizeof(device);
    device.synchronize = [](void* ctx, int8_t d) noexcept {
      return guard([&] { asyncOf(ctx).synchronizeDevice(d); });
    };
    device.show_config = &Shared::showConfig;
    device.properties = &Shared::properties;
    streams.struct_size = sizeof(streams);
    streams.get_default = [](void* ctx, int8_t d, int64_t* out) noexcept {
      return guard([&] { *out = asyncOf(ctx).defaultStream(d); });
    };
    streams.create = [](void* ctx, int8_t d, int32_t priority, int64_t* out) noexcept {
      return guard([&] { *out = asyncOf(ctx).createStream(d, priority); });
    };
    streams.query = [](void* ctx, accel_stream s, int32_t* done) noexcept {
      return guard([&] { *done = asyncOf(ctx).queryStream(s) ? 1 : 0; });
    };
    streams.synchronize = [](void* ctx, accel_stream s) noexcept {
      return guard([&] { asyncOf(ctx).synchronizeStream(s); });
    };
    streams.priority_range = [](void* ctx, int8_t d, int32_t* lowest,
                                int32_t* greatest) noexcept {
      return guard([&] {
        const std::pair<int, int> range = asyncOf(ctx).priorityRange(d);
        *lowest = range.first;
        *greatest = range.second;
      });
    };
    events.struct_size = sizeof(events);
    events.create = [](void* ctx, int8_t d, uint32_t flags, uint64_t* out) noexcept {
      return guard([&] { *out = asyncOf(ctx).createEvent(d, flags); });
    };
    events.destroy = [](void* ctx, uint64_t e) noexcept { asyncOf(ctx).destroyEvent(e); };
    events.record = [](void* ctx, uint64_t e, accel_stream s) noexcept {
      return guard([&] { asyncOf(ctx).recordEvent(e, s); });
    };
    events.block = [](void* ctx, uint64_t e, accel_stream s) noexcept {
      return guard([&] { asyncOf(ctx).blockStream(e, s); });
    };
    events.query = [](void* ctx, uint64_t e, int32_t* done) noexcept {
      return guard([&] { *done = asyncOf(ctx).queryEvent(e) ? 1 : 0; });
    };
    events.synchronize = [](void* ctx, uint64_t e) noexcept {
      return guard([&] { asyncOf(ctx).synchronizeEvent(e); });
    };
    events.elapsed_ms = [](void* ctx, uint64_t start, uint64_t end,
                           double* out) noexcept {
      return guard([&] { *out = asyncOf(ctx).elapsedMs(start, end); });
    };
    graphs.struct_size = sizeof(graphs);
    graphs.create = [](void* ctx, int32_t keep, uint64_t* out) noexcept {
      return guard([&] { *out = asyncOf(ctx).createGraph(keep != 0); });
    };
    graphs.destroy = [](void* ctx, uint64_t g) noexcept {
      return guard([&] { asyncOf(ctx).destroyGraph(g); });
    };
    graphs.capture_begin = [](void* ctx, uint64_t g, accel_stream s,
                              int32_t mode) noexcept {
      return guard([&] { asyncOf(ctx).captureBegin(g, s, mode); });
    };
    graphs.capture_end = [](void* ctx, uint64_t g) noexcept {
      return guard([&] { asyncOf(ctx).captureEnd(g); });
    };
    graphs.instantiate = [](void* ctx, uint64_t g) noexcept {
      return guard([&] { asyncOf(ctx).instantiateGraph(g); });
    };
    graphs.replay = [](void* ctx, uint64_t g) noexcept {
      return guard([&] { asyncOf(ctx).replayGraph(g); });
    };
    graphs.reset = [](void* ctx, uint64_t g) noexcept {
      return guard([&] { asyncOf(ctx).resetGraph(g); });
    };
    graphs.prepare_replay = [](void* ctx, uint64_t g) noexcept {
      return guard([&] { asyncOf(ctx).prepareReplay(g); });
    };
    copies.struct_size = sizeof(copies);
    copies.host_to_device = [](void* ctx, void* dst, const void* src, size_t bytes,
                               accel_stream s) noexcept {
      return guard([&] { asyncOf(ctx).copyHostToDevice(dst, src, bytes, s); });
    };
    copies.device_to_host = [](void* ctx, void* dst, const void* src, size_t bytes,
                               accel_stream s) noexcept {
      return guard([&] { asyncOf(ctx).copyDeviceToHost(dst, src, bytes, s); });
    };
    copies.device_to_device = [](void* ctx, void* dst, const void* src, size_t bytes,
                                 accel_stream s) noexcept {
      return guard([&] { asyncOf(ctx).copyDeviceToDevice(dst, src, bytes, s); });
    };
    fill.struct_size = sizeof(fill);
    fill.fill = [](void* ctx, accel_stream s, int32_t kind, void* data, uint64_t count,
                   double a, double b, accel_generator* generator) noexcept {
      return guard([&] { asyncOf(ctx).fill(s, kind, data, count, a, b, generator); });
    };
    if (backend.answersPrimaryContext()) {
      high.has_primary_context = [](void* ctx, int8_t d) noexcept -> int32_t {
        return probe(0, [&] { return asyncOf(ctx).hasPrimaryContext(d) ? 1 : 0; });
      };
    }
    if (backend.keepsCurrent()) {
      low.get_current_device = [](void* ctx, int8_t* out) noexcept {
        return guard([&] { *out = asyncOf(ctx).currentDevice(); });
      };
      low.set_current_device = [](void* ctx, int8_t d) noexcept {
        return guard([&] { asyncOf(ctx).setCurrentDevice(d); });
      };
      streams.get_current = [](void* ctx, int8_t d, int64_t* out) noexcept {
        return guard([&] { *out = asyncOf(ctx).currentStream(d); });
      };
      streams.set_current = [](void* ctx, accel_stream s) noexcept {
        return guard([&] { asyncOf(ctx).setCurrentStream(s); });
      };
    }
  }
};

}  // namespace accel::adapter::detail

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_TABLES_H
