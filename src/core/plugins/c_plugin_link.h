// Internal: the core's side of the C plugin boundary (accel/plugin_abi.h) —
// what one C plugin's services calls reach (accel_core), the services table,
// the translation of statuses into the library's errors, and the
// negotiation with a plugin's entry.
//
// Thread-safety: the services are thread-safe; a link's registrar is used
// only on the loading thread, during the plugin's register_backends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include "accel/plugin.h"
#include "accel/plugin_abi.h"

// One loaded C plugin, as its services calls name it. Leaked: the plugin
// keeps the pointer for the rest of the process.
struct accel_core {
  std::string plugin;            // what the plugin calls itself, for messages
  std::uint32_t negotiated = 0;  // the API version both speak
  // Set only while the plugin's register_backends runs, on that thread.
  accel::Registrar* registrar = nullptr;
  std::thread::id registering_thread{};
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
[[noreturn]] void throwPluginStatus(accel_status status, std::string_view backend,
                                    std::string_view function);

// Forgets a message the plugin reported without failing (so that it cannot
// be taken for a later call's). Never throws.
void clearPluginError() noexcept;

// Negotiates with a plugin's entry and runs its register_backends into
// `registrar`. Fills r's plugin fields (name, version, API versions). True
// when the plugin registered without error; false with r's status and
// detail saying why not (VersionMismatch, InitFailed, Duplicate, NotAPlugin).
// Never throws but std::bad_alloc.
bool loadCEntry(accel_plugin_negotiate_fn entry, Registrar& registrar, PluginRecord& r);

}  // namespace accel::detail
