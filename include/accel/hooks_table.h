// The hooks table: which AcceleratorHooks serves each DeviceType.
//
// getHooks(type) is the one entry point a framework uses to reach a backend.
// It reads the process's table and never returns null: a type with no backend
// yields the "absent" hooks, whose probes answer benignly (not built, not
// available, 0 devices) and whose other calls throw NotAvailable naming the
// hook, the type, the backends that are registered and how to load one.
//
// HooksTable is an object: the process table sits behind getHooks() and the
// free functions below; a test or an embedder constructs its own and gets the
// same behaviour with none of the process's state.
//
// Registration works at any time, also after the type was looked up: there is
// no "permanently disabled" state; the next lookup sees the new backend.
// Three ways to register into the process table:
//  - registerHooks(std::make_unique<MyHooks>(type), "origin"): an instance, now.
//  - ACCEL_REGISTER_HOOKS(MyHooks, "name"): a factory, run on the first
//    getHooks of that type (lazily created singleton), registered when the
//    library's static initialisers run (for programs and the libraries they
//    link; a plugin registers through its entry instead).
//  - a plugin's register_backends (accel/plugin_abi.h), into the Registrar
//    the loader keeps for its load (registrar.h).
//
// Thread-safety: every member and function is thread-safe. get()/getHooks()
// is one acquire load on its fast path (a registered type).
//
// Lifetime: the process table and the hooks registered into it are never
// destroyed (docs/lifecycle.md). A table constructed by a caller destroys the
// hooks it owns when it is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device_type.h"
#include "accel/export.h"
#include "accel/hooks.h"
#include "accel/registrar.h"
#include "accel/registry.h"

namespace accel {

namespace detail {
// One slot per possible DeviceType id, so lookups need no bounds check.
inline constexpr int kHooksTableSize = 256;
class AbsentHooks;
}  // namespace detail

// Extra text for absent-backend errors: why nothing provides `type` (for the
// process table, the plugin report: which plugin that may provide it failed
// to load). Must be thread-safe and must not throw; empty when it has
// nothing to say.
using AbsenceExplainer = std::string (*)(DeviceType type) noexcept;

// Tells the fork handler whether a backend had started initialising (and so
// must not be used in a fork child). Must only read memory.
using InitStartedProbe = bool (*)(const AcceleratorHooks& hooks) noexcept;

class ACCEL_API HooksTable {
 public:
  // An empty table. `explain_absence` adds to absent-backend errors.
  // constexpr: the process table is constant-initialised, so lookups during
  // static initialisation and destruction are safe.
  constexpr explicit HooksTable(AbsenceExplainer explain_absence = nullptr) noexcept
      : explain_absence_(explain_absence) {}
  ~HooksTable();
  HooksTable(const HooksTable&) = delete;
  HooksTable& operator=(const HooksTable&) = delete;

  // The hooks for `type`: the registered backend, one created now by a
  // registered factory, or the absent hooks. Never throws.
  [[nodiscard]] AcceleratorHooks& get(DeviceType type) noexcept {
    AcceleratorHooks* hooks =
        slots_[static_cast<std::uint8_t>(type)].load(std::memory_order_acquire);
    if (hooks != nullptr) [[likely]]
      return *hooks;
    return getSlow(type);
  }

  // The installed hooks of `type`, or null: unlike get(), never runs a
  // factory and never returns the absent hooks. Never throws.
  [[nodiscard]] AcceleratorHooks* installed(DeviceType type) const noexcept {
    return slots_[static_cast<std::uint8_t>(type)].load(std::memory_order_acquire);
  }

  // Installs `hooks` for hooks->deviceType() and returns it (the table owns
  // it from now on). Throws InvalidArgument if hooks is null or its type was
  // never registered, and DuplicateRegistration if the type already has hooks
  // or a factory, naming the type and where the first came from.
  AcceleratorHooks& registerHooks(std::unique_ptr<AcceleratorHooks> hooks,
                                  std::string origin);

  // Registers `type_name` and a factory that builds its hooks on the first
  // get() of the type. The factory runs with no table lock held except that
  // type's own creation lock: it must not look up its own type (that lookup
  // sees the absent hooks, and the error is recorded). A factory that throws,
  // returns null or builds another type leaves the absent hooks, which say
  // so, and runs again on the next lookup. A factory of higher priority
  // replaces one not run yet; lower is ignored. Throws DuplicateRegistration
  // for equal priority or when the type's hooks already exist, and what
  // registerDeviceType throws.
  void registerHooksFactory(std::string_view type_name, HooksFactory factory,
                            std::string origin,
                            RegistryPriority priority = RegistryPriority::Default);

  // Installs everything `registrar` holds, all or nothing (see
  // Registrar::commitTo, which calls this). Returns the types installed.
  std::vector<DeviceType> commit(Registrar& registrar);

  // True if the type has hooks installed or a factory registered. Never throws.
  [[nodiscard]] bool isRegistered(DeviceType type) const noexcept;
  // A number that changes whenever the set of registered types or their
  // hooks changes (a registration, a commit, a factory's hooks installed), so
  // that a reader can cache what it derived from the table (the context's
  // accelerator order) and rebuild it only then. Read it before deriving:
  // a registration that races with the derivation makes the next read
  // differ. One acquire load; never throws.
  [[nodiscard]] std::uint64_t generation() const noexcept {
    return generation_.load(std::memory_order_acquire);
  }
  // Types with hooks or factories, in id order. Throws only std::bad_alloc.
  [[nodiscard]] std::vector<DeviceType> registeredTypes() const;
  // Where a type's backend came from ("plugin /path/libaccel_x.so", ...);
  // "(not created yet)" is appended while only its factory exists. Empty if
  // not registered. Throws only std::bad_alloc.
  [[nodiscard]] std::string origin(DeviceType type) const;
  // Why the type's factory failed the last time it ran; empty if it did not
  // fail (or there is none). Throws only std::bad_alloc.
  [[nodiscard]] std::string creationError(DeviceType type) const;
  // The absent hooks of `type` in this table (what get() returns when
  // nothing is registered or the factory failed). Never throws.
  [[nodiscard]] AcceleratorHooks& absent(DeviceType type) noexcept;

  // ---- fork support: for the core's fork handler (fork.h), nobody else ----
  // In the parent, before fork(): builds the stand-in of every backend for
  // which `started` is true (allocates; reads isBuilt and the values the
  // probes last answered, never asks the backend for devices, whose
  // discovery may be in progress). Never throws.
  void prepareForkStandIns(InitStartedProbe started) noexcept;
  // In the child after fork(): makes every backend for which `started` is
  // true refuse (AcceleratorHooks::refuseAfterFork, for references kept
  // from before the fork) and swaps it for its stand-in, which answers
  // probes from the values kept before the fork and refuses every other
  // hook with a DeviceError explaining the fork. Only loads and stores.
  // Never throws.
  void poisonStartedBackends(InitStartedProbe started) noexcept;
  // True when `type` was swapped for its stand-in in this (child) process.
  [[nodiscard]] bool isPoisoned(DeviceType type) const noexcept;

  // ---- hook layers: for the core's layer registry (src/core/layers), nobody else ----
  // Puts `replacement` in the slot of `type` if the slot holds `expected`
  // (a layers' decorator in front of the backend, or the backend back);
  // true if it did. One compare-and-swap: thread-safe; never throws.
  bool swapInstalled(DeviceType type, AcceleratorHooks* expected,
                     AcceleratorHooks* replacement) noexcept {
    return slots_[static_cast<std::uint8_t>(type)].compare_exchange_strong(
        expected, replacement, std::memory_order_acq_rel);
  }

 private:
  friend class detail::AbsentHooks;
  struct State;
  AcceleratorHooks& getSlow(DeviceType type) noexcept;
  // Where the type's backend or factory came from, as registered.
  std::string registeredOrigin(DeviceType type) const;
  State& state() const noexcept;
  void install(DeviceType type, std::unique_ptr<AcceleratorHooks> hooks,
               std::string origin);

  std::atomic<AcceleratorHooks*> slots_[detail::kHooksTableSize] = {};
  AbsenceExplainer explain_absence_;
  std::atomic<std::uint64_t> generation_{0};
  mutable std::atomic<State*> state_{nullptr};  // created on first need
};

namespace detail {
// The process table, constant-initialised and never destroyed: a union
// member's destructor runs only if the union's does, and this one's does not.
union ProcessHooksTable {
  HooksTable table;
  constexpr explicit ProcessHooksTable(AbsenceExplainer explain) : table(explain) {}
  ~ProcessHooksTable() {}
};
ACCEL_API extern ProcessHooksTable g_process_hooks;
}  // namespace detail

// The process's table (the one getHooks reads and plugins register into).
[[nodiscard]] inline HooksTable& processHooksTable() noexcept {
  return detail::g_process_hooks.table;
}

// The hooks for `type` in the process table. One acquire load on the fast
// path; never throws.
[[nodiscard]] inline AcceleratorHooks& getHooks(DeviceType type) noexcept {
  return detail::g_process_hooks.table.get(type);
}

// ---- the process table's registration and introspection ----
// Each is the HooksTable member of the same name, on processHooksTable().

// `origin` defaults to "registerHooks()".
ACCEL_API AcceleratorHooks& registerHooks(std::unique_ptr<AcceleratorHooks> hooks,
                                          std::string origin = {});
// `origin` defaults to "registerHooksFactory()".
ACCEL_API void registerHooksFactory(std::string_view type_name, HooksFactory factory,
                                    RegistryPriority priority = RegistryPriority::Default,
                                    std::string origin = {});
ACCEL_API bool isHooksRegistered(DeviceType type) noexcept;
ACCEL_API std::vector<DeviceType> registeredHooksTypes();
ACCEL_API std::string hooksOrigin(DeviceType type);
ACCEL_API AcceleratorHooks& absentHooks(DeviceType type) noexcept;

// Helper for ACCEL_REGISTER_HOOKS: registers at static-initialisation time,
// into a Registrar of its own committed to the process table at once; its
// origin names the library the registration object lives in (or "the
// program"). A registration error is printed to stderr and kept for
// diagnostics, since an exception cannot leave a static initialiser without
// terminating.
struct ACCEL_API HooksRegistration {
  HooksRegistration(std::string_view type_name, HooksFactory factory,
                    RegistryPriority priority = RegistryPriority::Default) noexcept;
};

// Errors raised by HooksRegistration objects so far (empty when none).
// Thread-safe; throws only std::bad_alloc.
ACCEL_API std::vector<std::string> staticRegistrationErrors();

}  // namespace accel

#define ACCEL_HOOKS_CONCAT_INNER(a, b) a##b
#define ACCEL_HOOKS_CONCAT(a, b) ACCEL_HOOKS_CONCAT_INNER(a, b)
// ACCEL_REGISTER_HOOKS(HooksClass, "name"): registers a factory that builds
// HooksClass (default-constructible) when "name" is first looked up.
#define ACCEL_REGISTER_HOOKS(HooksClass, type_name)                        \
  static const ::accel::HooksRegistration ACCEL_HOOKS_CONCAT(              \
      accel_hooks_reg_, __COUNTER__)(type_name, [] {                       \
    return ::std::unique_ptr<::accel::AcceleratorHooks>(new HooksClass()); \
  })
