// openreg: accelhooks' simulated multi-device accelerator, the reference backend.
//
// openreg behaves like a device, not like the host: its memory lives in an
// address range the host cannot read (a host dereference faults), its work
// runs asynchronously on per-stream worker threads, and it fails the way
// devices fail (out of memory, device lost, errors reported at the next
// synchronisation). Frameworks test their device paths on it without
// hardware; vendors read it to learn how to plug in (docs/openreg.md).
//
// Two parts: libaccel_openreg.so is a plugin on the C plugin boundary
// (docs/plugin-abi.md), linking nothing of libaccel.so; this API is the
// accel_openreg library a program links (it links the plugin). A program
// calls registerBackend(), which loads the plugin it links through the
// plugin's entry (accel_core_load_entry: the load report lists it); loaded as
// a plugin instead (ACCEL_PLUGINS, loadBackend), the same library registers
// through the loader, and registerBackend() finds it. After that, openreg is
// reached like any backend:
//
//   accel::openreg::registerBackend();
//   accel::DeviceType openreg = accel::openreg::deviceType();
//   accel::globalContext().lazyInitDevice(openreg);
//   accel::AcceleratorHooks& hooks = accel::getHooks(openreg);
//
// The functions of the openreg API (memory.h, kernel.h, fill.h,
// fault_injection.h, execution_units.h) call registerBackend() first and
// have the core initialise openreg on first use (the hooks' init(), as any
// hook would); they never trigger plugin autoload (ACCEL_PLUGINS).
//
// Thread-safety: every function here is thread-safe.
// Lifetime: the hooks and the simulated devices live until the process ends;
// their worker threads never hold up exit. After fork(), a child of a process
// that had initialised openreg cannot use it (every call throws DeviceError).
#pragma once

#include <string>

#include "accel/device_type.h"
#include "accel/hooks.h"
#include "accel/openreg/config.h"
#include "accel/openreg/export.h"

namespace accel::openreg {

// The name openreg registers its device type under.
inline constexpr const char* kDeviceTypeName = "openreg";

// The "openreg" device type (registering the name on first call). Throws
// InvalidArgument only if the process has run out of device type ids.
[[nodiscard]] ACCEL_OPENREG_API DeviceType deviceType();

// Registers device type "openreg" and the openreg backend, once per process
// (the plugin this program links, through its entry, unless it was loaded as
// a plugin already); later calls return the same hooks. Does not initialise
// the devices (the environment is read on first use, see config.h). Throws
// NotAvailable with the load report's reason when the core refuses the
// plugin (another library registered "openreg", say).
ACCEL_OPENREG_API AcceleratorHooks& registerBackend();

// The path of the libaccel_openreg.so this program links. Never throws but
// std::bad_alloc; empty if the loader cannot say.
[[nodiscard]] ACCEL_OPENREG_API std::string pluginPath();

// The configuration the devices were initialised with. Initialises the
// backend first; throws what init throws (InvalidArgument for a malformed
// environment variable).
[[nodiscard]] ACCEL_OPENREG_API const Config& activeConfig();

}  // namespace accel::openreg
