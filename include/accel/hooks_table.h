// The hooks table: which AcceleratorHooks serves each DeviceType.
//
// getHooks(type) is the one entry point a framework uses to reach a backend.
// It never returns null: a type with no backend yields the "absent" hooks,
// whose probes answer benignly (not built, not available, 0 devices) and
// whose other calls throw NotAvailable naming the hook, the type, the
// backends that are registered and how to load one.
//
// Registration works at any time, also after the type was looked up: there is
// no "permanently disabled" state; the next getHooks sees the new backend.
// Two ways to register:
//  - registerHooks(std::make_unique<MyHooks>()): an instance, now.
//  - ACCEL_REGISTER_HOOKS(MyHooks, "name"): a factory, run on the first
//    getHooks of that type (lazily created singleton). Static-registration
//    form for backends that register when their library loads.
//
// Thread-safety: all functions are thread-safe. getHooks is one acquire load
// on its fast path (a registered type).
//
// Lifetime: registered hooks are never destroyed (docs/lifecycle.md).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device_type.h"
#include "accel/export.h"
#include "accel/hooks.h"
#include "accel/registry.h"

namespace accel {

namespace detail {
// One slot per possible DeviceType id, so lookups need no bounds check.
inline constexpr int kHooksTableSize = 256;
ACCEL_API extern std::atomic<AcceleratorHooks*> g_hooks_table[kHooksTableSize];
ACCEL_API AcceleratorHooks& getHooksSlow(DeviceType type) noexcept;
}  // namespace detail

// The hooks for `type`: the registered backend, a lazily created one from a
// registered factory, or the absent hooks. Never throws.
[[nodiscard]] inline AcceleratorHooks& getHooks(DeviceType type) noexcept {
  AcceleratorHooks* hooks = detail::g_hooks_table[static_cast<std::uint8_t>(type)].load(
      std::memory_order_acquire);
  if (hooks != nullptr) [[likely]]
    return *hooks;
  return detail::getHooksSlow(type);
}

// Installs `hooks` for hooks->deviceType() and returns it (the table owns it
// from now on, forever). Thread-safe. Throws InvalidArgument if hooks is null
// or its type was never registered, and DuplicateRegistration if the type
// already has hooks or a hooks factory (two libraries providing one
// backend), naming the type and where the first came from.
ACCEL_API AcceleratorHooks& registerHooks(std::unique_ptr<AcceleratorHooks> hooks,
                                          std::string origin = {});

// True if the type has hooks installed or a factory registered. Thread-safe;
// never throws.
ACCEL_API bool isHooksRegistered(DeviceType type) noexcept;

// Types with installed hooks or registered factories, in id order.
// Thread-safe; throws only std::bad_alloc.
ACCEL_API std::vector<DeviceType> registeredHooksTypes();

// Where a type's hooks came from ("static registration", a plugin path...);
// empty if unknown or not registered. Thread-safe; throws only std::bad_alloc.
ACCEL_API std::string hooksOrigin(DeviceType type);

// The absent hooks of `type` (what getHooks returns when nothing is registered).
ACCEL_API AcceleratorHooks& absentHooks(DeviceType type) noexcept;

// Extra text appended to absent-backend errors for a type, e.g. why a plugin
// that would provide it did not load. The plugin loader installs one. The
// function must be thread-safe and must not throw.
using AbsentBackendHint = std::string (*)(DeviceType type) noexcept;
ACCEL_API void setAbsentBackendHint(AbsentBackendHint hint) noexcept;

// Factories keyed by device type name, creating hooks on first getHooks.
// A factory runs once, on the first getHooks of its type, with no core lock
// held except that type's own creation lock: it must not look up its own type
// (that lookup sees the absent hooks, and the error is recorded), and two
// factories that look each other up from two threads at once deadlock.
// Thread-safe (see Registry); never throws.
using HooksRegistry = Registry<std::string, AcceleratorHooks>;
ACCEL_API HooksRegistry& hooksRegistry();

// Registers a factory for `type_name` (registering the type name too).
// Thread-safe. Throws what registerDeviceType and Registry::registerCreator
// throw, and DuplicateRegistration when the type's hooks already exist (the
// new factory would never run).
ACCEL_API void registerHooksFactory(
    std::string_view type_name,
    std::function<std::unique_ptr<AcceleratorHooks>()> factory,
    RegistryPriority priority = RegistryPriority::Default, std::string help = {});

// Helper for ACCEL_REGISTER_HOOKS: registers at static-initialisation time.
// A registration error is printed to stderr and kept for diagnostics, since
// an exception cannot leave a static initialiser without terminating.
struct ACCEL_API HooksRegistration {
  HooksRegistration(std::string_view type_name,
                    std::function<std::unique_ptr<AcceleratorHooks>()> factory,
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
