// The extension interface of libaccel_openreg.so: what openreg's own API
// (accel/openreg/*.h, compiled into the programs that use it: the static
// library accel_openreg) asks of the plugin beyond the hooks the core calls.
//
// Both sides are openreg, built together, so the interface is C++; nothing
// of the core crosses it (streams are accel_stream, generators the core's
// C handles), and nothing is thrown across it: each function returns a
// Status with the plugin's message (accel/adapter/extension_status.h), which
// the API throws as the library's error of that kind. The plugin exports
// these and the negotiation entry, nothing else.
//
// The plugin side reaches its state through the backend the plugin entry
// registered (registered_backend.h), the one way in. It initialises
// nothing: the core runs the backend's init, the one init path, and the API
// asks it to (AcceleratorHooks::init()) before calling a function here that
// needs the devices; such a function refuses an uninitialised openreg with
// NotAvailable, and a fork child of an initialised one with DeviceError.
//
// Thread-safety: every function is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/adapter/extension_status.h"
#include "accel/openreg/config.h"
#include "accel/openreg/execution_units.h"
#include "accel/openreg/export.h"
#include "accel/plugin_abi.h"

namespace accel::openreg::extension {

// ACCEL_OK, or a failure's status and message.
using Status = adapter::ExtensionStatus;

// A buffer a kernel names: checked against the core's blocks and opened for
// host access while the kernel runs.
struct KernelBuffer {
  std::string name;
  void* data = nullptr;
  std::size_t bytes = 0;
};

ACCEL_OPENREG_API Status copy(void* dst, const void* src, std::size_t bytes) noexcept;
ACCEL_OPENREG_API Status copyAsync(void* dst, const void* src, std::size_t bytes,
                                   accel_stream stream) noexcept;
// Whether ptr is in an openreg device's address range (false before init
// and before registration).
ACCEL_OPENREG_API bool isDevicePointer(const void* ptr) noexcept;
ACCEL_OPENREG_API Status launchKernel(accel_stream stream, std::string_view name,
                                      std::vector<KernelBuffer> buffers,
                                      std::function<void()> body) noexcept;
ACCEL_OPENREG_API Status failNthAllocation(std::uint64_t nth) noexcept;
ACCEL_OPENREG_API Status loseDeviceAfter(std::int8_t device,
                                         std::uint64_t operations) noexcept;
ACCEL_OPENREG_API Status isDeviceLost(std::int8_t device, bool& lost) noexcept;
ACCEL_OPENREG_API Status setStreamLatency(accel_stream stream,
                                          std::int64_t microseconds) noexcept;
ACCEL_OPENREG_API Status clearFaults() noexcept;
ACCEL_OPENREG_API Status setExecutionUnits(std::int8_t device, int units) noexcept;
ACCEL_OPENREG_API Status executionUnitsState(std::int8_t device,
                                             ExecutionUnitsState& state) noexcept;
// The configuration openreg was initialised with.
ACCEL_OPENREG_API Status activeConfig(Config& config) noexcept;
// The configuration `lookup` describes (the environment's variables);
// needs neither registration nor init.
ACCEL_OPENREG_API Status parseConfig(const EnvironmentLookup& lookup,
                                     Config& config) noexcept;

}  // namespace accel::openreg::extension
