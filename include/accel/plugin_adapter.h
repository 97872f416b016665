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
// An asynchronous device (its own streams, events, graphs and copies)
// derives from accel::adapter::Backend instead and registers with
// registerBackend; its memory hands the core stream events
// (Memory::streamEvents) so that the caching allocator can reuse a block a
// stream may still use only once that stream is past it. The core keeps its
// caches, generators, graph pools, capture rules and (unless the backend
// keeps them) the current device and streams; the backend reaches the core
// (pointer lookups, Philox reservations, the reference fill) through
// BackendBase::core(). accel/adapter/backend.h lists what each group asks.
//
// Errors: a backend function fails by throwing; the adapter catches every
// exception at the boundary and hands the core a status and a message. The
// Failure classes of accel/adapter/failure.h choose the status (InvalidArgument,
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

#include <cstdint>
#include <memory>
#include <utility>

#include "accel/adapter/backend.h"
#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"
#include "accel/adapter/tables.h"
#include "accel/plugin_abi.h"

// Everything below is the plugin's own, whatever visibility the plugin is
// built with: exported, its inline functions and their statics would be
// merged across plugins by the dynamic linker (a function-local static
// becomes STB_GNU_UNIQUE, one per process even under RTLD_LOCAL), and two
// plugins would share one link to the core. Only the entry is exported
// (ACCEL_PLUGIN_EXPORT).
#pragma GCC visibility push(hidden)

namespace accel::adapter {

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
    // Asked here first, so that a bad configuration fails the registration
    // with its message (the probe the core asks answers 0 instead).
    (void)backend->deviceCount();
    SynchronousBackend* sync = backend.get();
    auto registered = prepare(type_name, std::move(backend));
    registered->sync = sync;
    const accel_low_fns low{sizeof(low),
                            &detail::Shared::isBuilt,
                            &detail::Shared::isAvailable,
                            &detail::Shared::deviceCount,
                            nullptr,
                            nullptr,
                            &detail::Shared::unavailableReason};
    const accel_high_fns high{sizeof(high), &detail::Shared::init, nullptr};
    // synchronize: the core's kit answers it for a synchronous device.
    const accel_device_fns device{sizeof(device), nullptr, &detail::Shared::showConfig,
                                  &detail::Shared::properties};
    accel_backend b =
        describe(*registered, groups | ACCEL_GROUP_STREAMS | ACCEL_GROUP_EVENTS);
    b.flags = ACCEL_BACKEND_SYNCHRONOUS;
    b.low = &low;
    b.high = &high;
    b.device = &device;
    commit(std::move(registered), b);
  }

  // Registers device type `type_name` and the asynchronous backend serving
  // it, declaring `groups` (ACCEL_GROUP_* bits; low and high come with
  // every backend). The tables of the declared groups call the backend's
  // functions; the core keeps the current device and streams unless
  // backend.keepsCurrent(). The backend lives for the rest of the process.
  // Throws Failure with the core's message when the core refuses.
  void registerBackend(const char* type_name, std::unique_ptr<Backend> backend,
                       std::uint32_t groups) {
    if (backend == nullptr) throw InvalidArgument("registerBackend: the backend is null");
    Backend* async = backend.get();
    auto registered = prepare(type_name, std::move(backend));
    registered->async = async;
    const detail::AsyncTables tables(*async);
    accel_backend b = describe(*registered, groups);
    b.low = &tables.low;
    b.high = &tables.high;
    b.device = &tables.device;
    b.streams = &tables.streams;
    b.events = &tables.events;
    b.graphs = &tables.graphs;
    b.copies = &tables.copies;
    b.fill = &tables.fill;
    commit(std::move(registered), b);
  }

 private:
  // The device type registered and the backend attached to its core.
  std::unique_ptr<detail::Registered> prepare(const char* type_name,
                                              std::unique_ptr<BackendBase> backend) {
    const accel_core_services& services = *detail::link().services;
    std::int32_t type = 0;
    detail::check(services.register_device_type(core_, type_name, &type));
    backend->attach(Core(core_, &services, type));
    auto registered = std::make_unique<detail::Registered>();
    registered->base = backend.get();
    registered->owner = std::move(backend);
    type_ = type;
    return registered;
  }
  accel_backend describe(detail::Registered& r, std::uint32_t groups) {
    device_memory_ = detail::segmentFns(r.base->deviceMemory());
    pinned_memory_ = detail::segmentFns(r.base->pinnedMemory());
    accel_backend b{};
    b.struct_size = sizeof(b);
    b.device_type = type_;
    b.groups = groups | ACCEL_GROUP_LOW | ACCEL_GROUP_HIGH;
    b.ctx = &r;
    b.device_memory = &device_memory_;
    b.device_memory_ctx = &r.base->deviceMemory();
    b.pinned_memory = &pinned_memory_;
    b.pinned_memory_ctx = &r.base->pinnedMemory();
    return b;
  }
  // Kept for the rest of the process once the core registered it (the core
  // calls into it); freed if the core refuses it, having kept nothing.
  void commit(std::unique_ptr<detail::Registered> registered, const accel_backend& b) {
    detail::check(detail::link().services->register_backend(core_, &b));
    (void)registered.release();
  }

  accel_core* core_;
  std::int32_t type_ = -1;
  accel_segment_fns device_memory_{};
  accel_segment_fns pinned_memory_{};
};

namespace detail {

// The entry's negotiation: the lower of the core's newest version and this
// header's; refused below the plugin's floor (MAJOR.oldest_minor) or across
// a major version.
inline accel_status negotiate(const accel_core_offer* offer, accel_plugin_answer* answer,
                              const char* name, const char* version,
                              accel_status (*register_backends)(accel_core*),
                              std::uint32_t oldest_minor = 0) noexcept {
  constexpr std::uint32_t kNewest = ACCEL_PLUGIN_ABI_CURRENT;
  const std::uint32_t kOldest =
      ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, oldest_minor);
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
                  "the plugin needs a plugin API version between its floor and the "
                  "headers it was built with (its range is in the load report)");
  }
  ACCEL_ADAPTER_ANSWER_(version, speak);
  link().version = speak;
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
// ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE(..., oldest_minor) is the same entry for
// a plugin that needs plugin API MAJOR.oldest_minor or later (services a
// minor version added): an older core refuses it at negotiation, both
// ranges named, instead of it failing later.
#define ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE(plugin_name, plugin_version,     \
                                          register_function, oldest_minor) \
  extern "C" ACCEL_PLUGIN_EXPORT accel_status accel_plugin_negotiate(      \
      const accel_core_offer* offer, accel_plugin_answer* answer) {        \
    return ::accel::adapter::detail::negotiate(                            \
        offer, answer, (plugin_name), (plugin_version),                    \
        [](accel_core* core) noexcept {                                    \
          return ::accel::adapter::detail::guard([&] {                     \
            ::accel::adapter::Registrar registrar(core);                   \
            (register_function)(registrar);                                \
          });                                                              \
        },                                                                 \
        (oldest_minor));                                                   \
  }                                                                        \
  static_assert(true, "ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE requires a semicolon")
#define ACCEL_DEFINE_PLUGIN_ADAPTER(plugin_name, plugin_version, register_function) \
  ACCEL_DEFINE_PLUGIN_ADAPTER_SINCE(plugin_name, plugin_version, register_function, 0)

#endif  // ACCEL_PLUGIN_ADAPTER_H
