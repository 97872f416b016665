// A plugin the program links, registered once from the program's side.
//
// A backend's C++ API (accel::openreg::registerBackend(), the OpenCL and CUDA
// ones) is a small library in the program over a plugin that the program
// links as well. Its registerBackend() is this function:
//
//   AcceleratorHooks& registerBackend() {
//     static accel::LinkedPlugin plugin{"openreg", &accel_openreg_negotiate,
//                                       "accel::openreg::registerBackend"};
//     return plugin.hooks();
//   }
//
// The first call registers the plugin through its own entry (passed by
// address, so that a program linking several plugins reaches the right one);
// later calls, and calls after the plugin was loaded from a file (ACCEL_PLUGINS,
// loadBackend), return the registered hooks. A plugin loaded from a file other
// than the one the program links is refused: the two copies would have two
// runtimes, and the API would drive the one that registered nothing.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "accel/export.h"
#include "accel/hooks.h"
#include "accel/plugin_abi.h"

namespace accel {

// The file that defines `entry` (dladdr), or "" when the dynamic linker cannot
// say (a static executable) or `entry` is null. Never throws except
// std::bad_alloc.
[[nodiscard]] ACCEL_API std::string linkedPluginPath(accel_plugin_negotiate_fn entry);

class LinkedPlugin {
 public:
  // `device_type`: the name the plugin registers ("openreg"); `entry`: its
  // entry under a name of its own; `caller`: the API function, for messages
  // and the load report. The strings must outlive the object (literals).
  constexpr LinkedPlugin(std::string_view device_type, accel_plugin_negotiate_fn entry,
                         std::string_view caller) noexcept
      : device_type_(device_type), entry_(entry), caller_(caller) {}
  LinkedPlugin(const LinkedPlugin&) = delete;
  LinkedPlugin& operator=(const LinkedPlugin&) = delete;

  // Registers the plugin unless its device type has a backend already, and
  // returns the type's hooks; after the first success, one atomic load. The
  // load report records the registration with source "accel_core_load_entry"
  // and path "libaccel_<type> (<caller>)". In a fork child of a process that
  // started the backend before this object registered, returns the core's
  // stand-in that refuses every use (docs/lifecycle.md, "fork()").
  // Throws NotAvailable naming the caller and the reason when the core refuses
  // the entry (the load report's words), or when the type's backend was
  // loaded from another file than the one that defines the entry;
  // InvalidArgument for an empty device type or a null entry.
  // Thread-safe: concurrent first calls register once.
  AcceleratorHooks& hooks() {
    if (AcceleratorHooks* registered = registered_.load(std::memory_order_acquire))
        [[likely]] {
      return *registered;
    }
    return registerOnce();
  }

  // The file that defines the entry (dladdr), or "" when the dynamic linker
  // cannot say (a static executable). Never throws except std::bad_alloc.
  [[nodiscard]] std::string path() const { return linkedPluginPath(entry_); }

 private:
  ACCEL_API AcceleratorHooks& registerOnce();

  std::string_view device_type_;
  accel_plugin_negotiate_fn entry_;
  std::string_view caller_;
  std::atomic<AcceleratorHooks*> registered_{nullptr};
};

}  // namespace accel
