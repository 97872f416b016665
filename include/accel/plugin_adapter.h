// The C++ side of writing a plugin: a backend written as a C++ class, turned
// into the C tables of the plugin ABI (accel/plugin_abi.h) by this header.
//
// This header is compiled into the plugin; it uses nothing of libaccel.so
// (a plugin built on it links no core symbol at all) and nothing newer than
// C++17, so that a plugin built with any compiler and standard library
// (GCC and libstdc++, clang and libc++) loads into any core of the same
// plugin API major version. What it needs from the core it gets through the
// services table the core hands the entry.
//
// A synchronous device (its work is done when the call that enqueues it
// returns, and the host can address its memory) is one class:
//
//   class MyBackend final : public accel::adapter::SynchronousBackend {
//    public:
//     int deviceCount() const override { return 2; }
//     accel::adapter::Memory& deviceMemory() override { return memory_; }
//     accel::adapter::Memory& pinnedMemory() override { return host_; }
//     std::string showConfig() const override { return "mydev: 2 devices\n"; }
//     accel::adapter::Properties properties(std::int8_t device) const override;
//    private:
//     MyMemory memory_;   // whole segments: allocate, free, capacity
//     MyHostMemory host_;
//   };
//
//   void registerMyBackend(accel::adapter::Registrar& registrar) {
//     registrar.registerSynchronous("mydev", std::make_unique<MyBackend>(),
//                                   ACCEL_GROUP_DEVICE | ACCEL_GROUP_MEMORY |
//                                       ACCEL_GROUP_MEMORY_HISTORY |
//                                       ACCEL_GROUP_GRAPHS | ACCEL_GROUP_COPIES);
//   }
//   ACCEL_DEFINE_PLUGIN_ADAPTER("mydev", "1.0.0", registerMyBackend);
//
// The core then provides the rest (ACCEL_BACKEND_SYNCHRONOUS in
// plugin_abi.h): the current device, streams and events of a synchronous
// device, its graphs and copies (declared above), the caching device
// allocator and pinned cache over the
// backend's memory (and with them the memory and memory_history groups),
// and Philox generators. examples/out_of_tree_backend is a complete plugin.
//
// Errors: a backend function fails by throwing; the adapter catches every
// exception at the boundary and hands the core a status and a message. The
// Failure classes below choose the status (InvalidArgument,
// NotSupported, NotAvailable, OutOfMemory, DeviceError); std::bad_alloc is
// out of memory; any other exception is ACCEL_ERROR_INTERNAL with its
// what(). Probes (isBuilt, isAvailable) that throw answer false.
//
// Build the plugin with hidden visibility (-fvisibility=hidden): only the
// entry, accel_plugin_negotiate, is exported.
//
// Thread-safety: the core calls a backend from any thread; its functions
// must be thread-safe. Registration runs once, on the loading thread.
#ifndef ACCEL_PLUGIN_ADAPTER_H
#define ACCEL_PLUGIN_ADAPTER_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "accel/plugin_abi.h"

// Everything below is the plugin's own, whatever visibility the plugin is
// built with: exported, its inline functions and their statics would be
// merged across plugins by the dynamic linker (a function-local static
// becomes STB_GNU_UNIQUE, one per process even under RTLD_LOCAL), and two
// plugins would share one link to the core. Only the entry is exported
// (ACCEL_PLUGIN_EXPORT).
#pragma GCC visibility push(hidden)

namespace accel::adapter {

// ---- failures: what a backend throws to fail with a given status ----

// Derived from std::exception alone, with the message kept in the plugin's
// own std::string: std::runtime_error's members are defined by the standard
// library itself, and in a process whose program uses another one (a
// libc++ plugin in a libstdc++ program) the dynamic linker may bind them to
// the program's, whose layout differs.
class Failure : public std::exception {
 public:
  // A status of ACCEL_OK is no failure: it becomes ACCEL_ERROR_INTERNAL.
  Failure(accel_status status, std::string message)
      : status_(status == ACCEL_OK ? ACCEL_ERROR_INTERNAL : status),
        message_(std::move(message)) {}
  [[nodiscard]] accel_status status() const noexcept { return status_; }
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 private:
  accel_status status_;
  std::string message_;
};
// A bad index, id, pointer or value.
struct InvalidArgument : Failure {
  explicit InvalidArgument(const std::string& m)
      : Failure(ACCEL_ERROR_INVALID_ARGUMENT, m) {}
};
// The backend cannot do this.
struct NotSupported : Failure {
  explicit NotSupported(const std::string& m) : Failure(ACCEL_ERROR_NOT_SUPPORTED, m) {}
};
// No driver or device.
struct NotAvailable : Failure {
  explicit NotAvailable(const std::string& m) : Failure(ACCEL_ERROR_NOT_AVAILABLE, m) {}
};
struct OutOfMemory : Failure {
  explicit OutOfMemory(const std::string& m) : Failure(ACCEL_ERROR_OUT_OF_MEMORY, m) {}
};
// The device or its driver failed or refused.
struct DeviceError : Failure {
  explicit DeviceError(const std::string& m) : Failure(ACCEL_ERROR_DEVICE, m) {}
};

// ---- what a backend describes ----

// A device's description (getDeviceProperties).
struct Properties {
  std::string name;                      // at most 255 bytes are kept
  std::uint64_t total_memory_bytes = 0;  // 0 if unknown
  int multiprocessor_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int warp_size = 0;
  int max_threads_per_multiprocessor = 0;
  std::uint64_t l2_cache_bytes = 0;
  bool is_integrated = false;
  std::string uuid;  // at most 63 bytes are kept
};

// A device's capacity; total 0 when unknown.
struct MemoryInfo {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

// Raw memory in whole segments, what the core's caches draw from. The core
// calls it holding the device's allocator lock, never re-entrantly.
class Memory {
 public:
  virtual ~Memory() = default;
  // A segment of exactly `bytes` on `device`, or nullptr when the device is
  // full (the cache then frees what it holds and retries). Throws for any
  // other failure.
  virtual void* allocate(std::int8_t device, std::size_t bytes) = 0;
  virtual void free(std::int8_t device, void* data, std::size_t bytes) noexcept = 0;
  // Capacity and free bytes (getMemoryInfo, memory fractions, out-of-memory
  // messages). Default: unknown.
  [[nodiscard]] virtual MemoryInfo info(std::int8_t /*device*/) const noexcept {
    return {};
  }
};

// A synchronous device (see the top of this header).
class SynchronousBackend {
 public:
  virtual ~SynchronousBackend() = default;
  // The number of devices, asked once, at registration (a synchronous
  // device's count is its configuration). Throws for a bad configuration:
  // the registration then fails with the message.
  [[nodiscard]] virtual int deviceCount() const = 0;
  [[nodiscard]] virtual bool isBuilt() const { return true; }
  [[nodiscard]] virtual bool isAvailable() const { return true; }
  // Runs once before any hook that needs the device; a throw is retried by
  // the next such hook.
  virtual void init() {}
  [[nodiscard]] virtual Memory& deviceMemory() = 0;
  // Page-locked host memory (getPinnedMemoryAllocator); a device without
  // page-locked memory of its own hands ordinary host memory.
  [[nodiscard]] virtual Memory& pinnedMemory() = 0;
  // The device group (declare ACCEL_GROUP_DEVICE to have them asked).
  [[nodiscard]] virtual std::string showConfig() const { return {}; }
  [[nodiscard]] virtual Properties properties(std::int8_t /*device*/) const { return {}; }
};

namespace detail {

// A refusal of the core's: it holds the message already, which the guard
// keeps instead of reporting one of its own.
struct CoreRefusal : Failure {
  explicit CoreRefusal(accel_status status) : Failure(status, "refused by the core") {}
};

// The core this plugin negotiated with, for the boundary's error reports.
struct Link {
  accel_core* core = nullptr;
  const accel_core_services* services = nullptr;
};
// One per plugin: this header is compiled into one plugin, and its entry
// sets the link once, before anything else runs.
inline Link& link() noexcept {
  static Link the_link;
  return the_link;
}

inline accel_status report(accel_status status, const char* message) noexcept {
  const Link& l = link();
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

inline void copyText(char* out, std::size_t capacity, const std::string& text) noexcept {
  const std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// One registered backend and its memory, as the tables' ctx pointers.
struct Registered {
  std::unique_ptr<SynchronousBackend> backend;
};

inline SynchronousBackend& backendOf(void* ctx) noexcept {
  return *static_cast<Registered*>(ctx)->backend;
}
inline Memory& memoryOf(void* ctx) noexcept { return *static_cast<Memory*>(ctx); }

// The tables' functions: each a trampoline into the backend, inside guard().
struct Trampolines {
  static int32_t isBuilt(void* ctx) noexcept {
    try {
      return backendOf(ctx).isBuilt() ? 1 : 0;
    } catch (...) {
      return 0;
    }
  }
  static int32_t isAvailable(void* ctx) noexcept {
    try {
      return backendOf(ctx).isAvailable() ? 1 : 0;
    } catch (...) {
      return 0;
    }
  }
  static int32_t deviceCount(void* ctx) noexcept {
    try {
      const int count = backendOf(ctx).deviceCount();
      return count < 0 ? 0 : count;
    } catch (...) {
      return 0;
    }
  }
  static accel_status init(void* ctx) noexcept {
    return guard([&] { backendOf(ctx).init(); });
  }
  static accel_status showConfig(void* ctx, const accel_text_sink* sink) noexcept {
    return guard([&] {
      const std::string text = backendOf(ctx).showConfig();
      sink->append(sink->sink, text.data(), text.size());
    });
  }
  static accel_status properties(void* ctx, int8_t device,
                                 accel_device_properties* out) noexcept {
    return guard([&] {
      const Properties p = backendOf(ctx).properties(device);
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
  static accel_status allocateSegment(void* ctx, int8_t device, size_t bytes,
                                      void** out) noexcept {
    return guard([&] { *out = memoryOf(ctx).allocate(device, bytes); });
  }
  static void freeSegment(void* ctx, int8_t device, void* data, size_t bytes) noexcept {
    memoryOf(ctx).free(device, data, bytes);
  }
  static void memoryInfo(void* ctx, int8_t device, uint64_t* total,
                         uint64_t* free_bytes) noexcept {
    const MemoryInfo info = memoryOf(ctx).info(device);
    *total = info.total_bytes;
    *free_bytes = info.free_bytes;
  }
};

inline accel_segment_fns segmentFns() noexcept {
  accel_segment_fns fns{};
  fns.struct_size = sizeof(fns);
  fns.allocate_segment = &Trampolines::allocateSegment;
  fns.free_segment = &Trampolines::freeSegment;
  fns.memory_info = &Trampolines::memoryInfo;
  return fns;
}

}  // namespace detail

// What a plugin's register function registers its backends with.
class Registrar {
 public:
  explicit Registrar(accel_core* core) noexcept : core_(core) {}

  // Registers device type `type_name` and the synchronous backend serving
  // it, declaring `groups` (ACCEL_GROUP_* bits; the low, high, streams and
  // events groups come with every synchronous backend). The backend lives
  // for the rest of the process. Throws Failure with the core's message
  // when the core refuses (a bad name, a type that already has a backend).
  void registerSynchronous(const char* type_name,
                           std::unique_ptr<SynchronousBackend> backend,
                           std::uint32_t groups) {
    if (backend == nullptr)
      throw InvalidArgument("registerSynchronous: the backend is null");
    const accel_core_services& services = *detail::link().services;
    // Asked here first, so that a bad configuration fails the registration
    // with its message (the probe the core asks answers 0 instead).
    (void)backend->deviceCount();
    std::int32_t type = 0;
    check(services.register_device_type(core_, type_name, &type));
    // Kept for the rest of the process once the core registered it (the core
    // calls into it); freed if the core refuses it, having kept nothing.
    auto registered = std::make_unique<detail::Registered>();
    registered->backend = std::move(backend);
    const accel_low_fns low{sizeof(low),
                            &detail::Trampolines::isBuilt,
                            &detail::Trampolines::isAvailable,
                            &detail::Trampolines::deviceCount,
                            nullptr,
                            nullptr};
    const accel_high_fns high{sizeof(high), &detail::Trampolines::init, nullptr};
    // synchronize: the core's kit answers it for a synchronous device.
    const accel_device_fns device{sizeof(device), nullptr,
                                  &detail::Trampolines::showConfig,
                                  &detail::Trampolines::properties};
    const accel_segment_fns memory = detail::segmentFns();
    accel_backend b{};
    b.struct_size = sizeof(b);
    b.device_type = type;
    b.groups = groups | ACCEL_GROUP_LOW | ACCEL_GROUP_HIGH | ACCEL_GROUP_STREAMS |
               ACCEL_GROUP_EVENTS;
    b.flags = ACCEL_BACKEND_SYNCHRONOUS;
    b.ctx = registered.get();
    b.low = &low;
    b.high = &high;
    b.device = &device;
    b.device_memory = &memory;
    b.device_memory_ctx = &registered->backend->deviceMemory();
    b.pinned_memory = &memory;
    b.pinned_memory_ctx = &registered->backend->pinnedMemory();
    check(services.register_backend(core_, &b));
    (void)registered.release();
  }

 private:
  // Passes a refusal of the core's on; the core holds its message.
  static void check(accel_status status) {
    if (status != ACCEL_OK) throw detail::CoreRefusal(status);
  }
  accel_core* core_;
};

namespace detail {

// The entry's negotiation: the lower of the core's newest version and this
// header's; refused below 1.0 or across a major version.
inline accel_status negotiate(const accel_core_offer* offer, accel_plugin_answer* answer,
                              const char* name, const char* version,
                              accel_status (*register_backends)(accel_core*)) noexcept {
  constexpr std::uint32_t kNewest = ACCEL_PLUGIN_ABI_CURRENT;
  constexpr std::uint32_t kOldest = ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, 0);
  if (offer == nullptr || answer == nullptr ||
      !ACCEL_ABI_HAS_FIELD(accel_core_offer, offer->struct_size, services) ||
      offer->services == nullptr) {
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  link() = Link{offer->core, offer->services};
  const std::uint32_t size = answer->struct_size;
#define ACCEL_ADAPTER_ANSWER_(field, value) \
  if (ACCEL_ABI_HAS_FIELD(accel_plugin_answer, size, field)) answer->field = (value)
  ACCEL_ADAPTER_ANSWER_(plugin_newest_version, kNewest);
  ACCEL_ADAPTER_ANSWER_(plugin_oldest_version, kOldest);
  ACCEL_ADAPTER_ANSWER_(name, name);
  ACCEL_ADAPTER_ANSWER_(version_text, version);
  const std::uint32_t speak =
      offer->newest_version < kNewest ? offer->newest_version : kNewest;
  if (speak < kOldest || ACCEL_PLUGIN_ABI_MAJOR_OF(speak) != ACCEL_PLUGIN_ABI_MAJOR) {
    return report(ACCEL_ERROR_VERSION,
                  "the plugin's adapter speaks only the major version of the headers it "
                  "was built with (its range is in the load report)");
  }
  ACCEL_ADAPTER_ANSWER_(version, speak);
  ACCEL_ADAPTER_ANSWER_(register_backends, register_backends);
#undef ACCEL_ADAPTER_ANSWER_
  return ACCEL_OK;
}

}  // namespace detail
}  // namespace accel::adapter

#pragma GCC visibility pop

// ACCEL_DEFINE_PLUGIN_ADAPTER(name, version_string, register_function):
// defines the plugin's entry, accel_plugin_negotiate. Use once per plugin,
// at global or namespace scope. `register_function` is a
// `void(accel::adapter::Registrar&)` function that may throw. A macro
// because the entry must be an exported C function with a fixed name.
#define ACCEL_DEFINE_PLUGIN_ADAPTER(plugin_name, plugin_version, register_function)     \
  extern "C" ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(                   \
      const accel_core_offer* offer, accel_plugin_answer* answer) {                     \
    return ::accel::adapter::detail::negotiate(                                         \
        offer, answer, (plugin_name), (plugin_version), [](accel_core* core) noexcept { \
          return ::accel::adapter::detail::guard([&] {                                  \
            ::accel::adapter::Registrar registrar(core);                                \
            (register_function)(registrar);                                             \
          });                                                                           \
        });                                                                             \
  }                                                                                     \
  static_assert(true, "ACCEL_DEFINE_PLUGIN_ADAPTER requires a semicolon")

#endif  // ACCEL_PLUGIN_ADAPTER_H
