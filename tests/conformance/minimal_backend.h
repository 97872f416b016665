// MinimalHooks: a backend with only the low and high groups, for checking the
// conformance suite itself.
//
// It exercises the suite's undeclared-group path (every optional group must
// answer NotSupported), and, given a Defect, breaks exactly one contract so
// that `accel check` can be shown to fail and to name the broken hook (one
// defect declares the device and streams groups, which the backend then
// serves as a synchronous device: every stream is always complete). Device
// memory is plain host memory tracked by address range.
//
//   accel::conformance::testing::registerMinimalBackend("minimaldev", 2);
//
// Thread-safety: every member is thread-safe; the current device is per thread.
// Lifetime: registered hooks live forever, like every registered hooks object.
#pragma once

#include <memory>
#include <string_view>

#include "accel/hooks.h"

namespace accel::conformance::testing {

// The contract a MinimalHooks breaks on purpose.
enum class Defect {
  None,
  // Declares the device and streams groups and implements them, except
  // getDefaultStreamImpl and getNewStreamImpl: cases about other hooks that
  // use those two must blame them, not the hook under test.
  StreamsWithoutDefaultOrNewStream,
};

// Registers device type `type_name` with a MinimalHooks of `device_count`
// devices and the given defect, and returns the hooks. Throws what
// registerDeviceType and registerHooks throw (a second registration of a name
// is a duplicate).
AcceleratorHooks& registerMinimalBackend(std::string_view type_name, int device_count,
                                         Defect defect = Defect::None);

// A MinimalHooks for `type` (already registered), not registered anywhere:
// for a plugin's registrar or a test's own HooksTable.
std::unique_ptr<AcceleratorHooks> makeMinimalBackend(DeviceType type, int device_count,
                                                     Defect defect = Defect::None);

}  // namespace accel::conformance::testing
