// The plugin author's side of a backend plugin: the entry a plugin exports,
// and ACCEL_DEFINE_PLUGIN, which writes it.
//
// A plugin is a shared library that exports one C function, ACCEL_PLUGIN_ENTRY
// (accel_plugin_entry_v2), returning a PluginEntry. Plugin authors write it
// with one line at namespace scope:
//
//   #include "accel/plugin_entry.h"
//
//   void registerMyBackend(accel::Registrar& registrar) {   // may throw
//     accel::DeviceType type = registrar.registerDeviceType("mydev");
//     registrar.registerHooks(std::make_unique<MyHooks>(type));
//   }
//   ACCEL_DEFINE_PLUGIN("mydev", "1.2.0", registerMyBackend);
//
// This is all a plugin needs from the plugin machinery. Loading plugins,
// autoload and the report of load attempts are the host's side, in
// accel/plugin.h (which includes this header). docs/writing-a-backend.md walks
// through a complete plugin.
//
// Thread-safety: the entry function may be called from any thread, any number
// of times; it returns the same static PluginEntry. The register function is
// called by the loader, once per successful load, on the loading thread.
#pragma once

#include "accel/registrar.h"
#include "accel/version.h"

namespace accel {

// What a plugin's entry function returns. The layout of this struct belongs to
// the symbol name: accel_plugin_entry_v2 returns exactly these fields in this
// order, forever. A future layout gets a new symbol (accel_plugin_entry_v3),
// which lets a core read the entry of any plugin before it decides to refuse it.
struct PluginEntry {
  // kPluginApiVersion of the headers the plugin was compiled with.
  int api_version;
  // The oldest core plugin API the plugin accepts (usually its api_version).
  int min_core_api_version;
  // What the plugin calls itself ("openreg") and its own version ("0.1.0").
  // Static strings; may be null (recorded as empty).
  const char* name;
  const char* version;
  // Registers the plugin's device types and hooks into the registrar. May
  // throw; the loader catches and then registers nothing. Null when the
  // library registers everything from static initialisers
  // (ACCEL_REGISTER_HOOKS) as it is opened.
  void (*register_fn)(Registrar& registrar);
};

// The entry function's C name, as the identifier and as a string for dlsym.
#define ACCEL_PLUGIN_ENTRY accel_plugin_entry_v2
inline constexpr const char kPluginEntrySymbol[] = "accel_plugin_entry_v2";
using PluginEntryFn = const PluginEntry* (*)();

}  // namespace accel

// ACCEL_DEFINE_PLUGIN(name, version_string, register_function): defines the
// plugin's exported entry. Use once per plugin, at global or namespace scope,
// in a library that links libaccel.so. `register_function` is a
// `void(accel::Registrar&)` function (or a captureless lambda) that may throw.
// The plugin declares the API version of the headers it is compiled with, and
// accepts any core that implements that version or a later one. A macro
// because the entry must be an exported `extern "C"` function with a fixed name.
#define ACCEL_DEFINE_PLUGIN(plugin_name, plugin_version, register_function)     \
  extern "C" __attribute__((visibility("default"))) const ::accel::PluginEntry* \
  ACCEL_PLUGIN_ENTRY() {                                                        \
    static const ::accel::PluginEntry entry{                                    \
        ::accel::kPluginApiVersion, ::accel::kPluginApiVersion, (plugin_name),  \
        (plugin_version),                                                       \
        static_cast<void (*)(::accel::Registrar&)>(register_function)};         \
    return &entry;                                                              \
  }                                                                             \
  static_assert(true, "ACCEL_DEFINE_PLUGIN requires a semicolon")
