// Internal: the core's side of the C plugin boundary (accel/plugin_abi.h) —
// what one C plugin's services calls reach (accel_core), the services table,
// the translation of statuses into the library's errors, and the
// negotiation with a plugin's entry.
//
// Thread-safety: the services are thread-safe; a link's registrar is used
// only on the loading thread, during the plugin's register_backends.
#pragma once

#include <atomic>
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <thread>

#include "accel/plugin.h"
#include "accel/plugin_abi.h"
#include "accel/registrar.h"

// One load of a C plugin, as its services calls name it. Kept by the loader
// for the rest of the process: the plugin may keep the pointer.
struct accel_core {
  std::string plugin;            // what the plugin calls itself, for messages
  std::uint32_t negotiated = 0;  // the API version both speak
  // Set only while the plugin's register_backends runs, on that thread;
  // atomic, because a plugin may call a service from a thread of its own.
  std::atomic<accel::Registrar*> registrar{nullptr};
  std::atomic<std::thread::id> registering_thread{};
};

namespace accel::detail {

// The oldest and newest plugin API versions this core implements
// (ACCEL_PLUGIN_ABI_VERSION numbers).
inline constexpr std::uint32_t kOldestPluginAbi = ACCEL_PLUGIN_ABI_VERSION(1, 0);
inline constexpr std::uint32_t kNewestPluginAbi = ACCEL_PLUGIN_ABI_CURRENT;

// "1.0". Throws only std::bad_alloc.
std::string abiVersionText(std::uint32_t version);

// The core's services table (static; never changes).
const accel_core_services& coreServices() noexcept;

// Throws the library's error for a failed plugin function: the message the
// plugin gave through set_error on this thread for this call, or one naming
// `backend`, `function` and the status when it gave none. Clears the
// thread's pending message.
[[noreturn]] void throwPluginStatus(
    accel_status status, std::string_view backend, std::string_view function,
    std::source_location where = std::source_location::current());

// Forgets the thread's pending plugin message. Never throws.
void clearPluginError() noexcept;

// The message the plugin gave for `status` on this thread (empty if none),
// taken. Throws only std::bad_alloc.
std::string takePluginMessage(accel_status status);

// True while a message a plugin gave (set_error) waits on this thread for
// the failed status it belongs to.
extern thread_local bool t_plugin_message_pending;

// After a plugin call that did not fail (or a probe or a void function):
// forgets a message it gave anyway, so that it cannot be taken for a later,
// unrelated failure's. One thread-local load when there is none.
inline void dropStalePluginMessage() noexcept {
  if (t_plugin_message_pending) [[unlikely]]
    clearPluginError();
}

// Negotiates with a plugin's entry, through `core` (the handle its services
// calls name: owned by the loader, kept for the rest of the process, since a
// plugin may keep it), and runs its register_backends into `registrar`. Fills r's plugin
// fields (name, version, API versions). True when the plugin registered without error;
// false with r's status and detail saying why not (VersionMismatch, InitFailed,
// Duplicate, NotAPlugin). Never throws but std::bad_alloc.
bool loadCEntry(accel_plugin_negotiate_fn entry, accel_core& core, Registrar& registrar,
                PluginRecord& r);

}  // namespace accel::detail
