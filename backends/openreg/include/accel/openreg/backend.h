// openreg: accelhooks' simulated multi-device accelerator, the reference backend.
//
// openreg behaves like a device, not like the host: its memory lives in an
// address range the host cannot read (a host dereference faults), its work
// runs asynchronously on per-stream worker threads, and it fails the way
// devices fail (out of memory, device lost, errors reported at the next
// synchronisation). Frameworks test their device paths on it without
// hardware; vendors read it to learn how to plug in (docs/openreg.md).
//
// Registration: a program that links libaccel_openreg.so calls
// registerBackend() once; as a plugin, the library's entry does the same.
// After that, openreg is reached like any backend:
//
//   accel::openreg::registerBackend();
//   accel::DeviceType openreg = accel::openreg::deviceType();
//   accel::globalContext().lazyInitDevice(openreg);
//   accel::AcceleratorHooks& hooks = accel::getHooks(openreg);
//
// The functions of the openreg API (copy.h, kernel.h, fill.h,
// fault_injection.h, execution_units.h) initialise openreg's own runtime on
// first use. They never go through the context: they neither register the
// hooks nor trigger plugin autoload (ACCEL_PLUGINS).
//
// Thread-safety: every function here is thread-safe.
// Lifetime: the hooks and the simulated devices live until the process ends;
// their worker threads never hold up exit. After fork(), a child of a process
// that had initialised openreg cannot use it (every call throws DeviceError).
#pragma once

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

// Registers device type "openreg" and the openreg hooks, once per process;
// later calls return the same hooks. Does not initialise the devices (the
// environment is read on first use, see config.h). Throws InvalidArgument if
// another library already registered hooks for "openreg" (a retry after that
// fails the same way).
ACCEL_OPENREG_API AcceleratorHooks& registerBackend();

// The configuration the devices were initialised with. Initialises the
// backend first; throws what init throws (InvalidArgument for a malformed
// environment variable).
[[nodiscard]] ACCEL_OPENREG_API const Config& activeConfig();

}  // namespace accel::openreg
