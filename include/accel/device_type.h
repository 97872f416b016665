// DeviceType: a small integer naming a kind of device ("cpu", "cuda", "openreg").
//
// The well-known types are built in with fixed ids so that they can be used in
// constant expressions. Any number of further types (up to kMaxDeviceTypes in
// all) are registered at run time by name, so out-of-tree backends coexist
// without competing for one reserved slot.
//
// Names: 1 to kMaxDeviceTypeNameLength characters, lower-case ASCII letters,
// digits and '_', starting with a letter. Names are case-sensitive and always
// lower case; "CUDA" is rejected with a hint naming "cuda" rather than silently
// folded, so that a name has exactly one spelling in logs and configuration.
//
// Thread-safety: all functions are thread-safe. Lookups never block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/export.h"

namespace accel {

enum class DeviceType : std::uint8_t {
  CPU = 0,
  CUDA = 1,
  HIP = 2,
  MPS = 3,
  XPU = 4,
  MTIA = 5,
  HPU = 6,
};

// Ids below this are the built-in types above.
inline constexpr int kNumBuiltinDeviceTypes = 7;
// Built-in plus run-time registered types, in all.
inline constexpr int kMaxDeviceTypes = 64;
inline constexpr std::size_t kMaxDeviceTypeNameLength = 31;

// Returns the type registered under `name`, registering it if new. Idempotent:
// the same name always yields the same type. Throws InvalidArgument for a bad
// name (empty, too long, characters outside [a-z0-9_], not starting with a
// letter) and when kMaxDeviceTypes types already exist.
ACCEL_API DeviceType registerDeviceType(std::string_view name);

// The type with this exact name, or nullopt. Never throws.
ACCEL_API std::optional<DeviceType> findDeviceType(std::string_view name) noexcept;

// The type with this exact name. Throws InvalidArgument naming the known
// types (and the lower-case spelling when that exists) if there is none.
ACCEL_API DeviceType deviceTypeFromName(std::string_view name);

// The name of `type`; "unknown" for an id that was never registered.
ACCEL_API std::string_view deviceTypeName(DeviceType type) noexcept;

// True if `type` is built in or was registered.
ACCEL_API bool isValidDeviceType(DeviceType type) noexcept;

// Every known type, built-ins first, then in registration order.
ACCEL_API std::vector<DeviceType> allDeviceTypes();

// Checks a candidate name against the naming rules; returns an explanation of
// what is wrong, or an empty string when the name is acceptable.
ACCEL_API std::string explainBadDeviceTypeName(std::string_view name);

// The names of `types` joined with ", " ("openreg, cuda"), or `if_empty`.
// Thread-safe; throws only std::bad_alloc. Used by every message that lists
// backends, so that they all read alike.
ACCEL_API std::string joinDeviceTypeNames(const std::vector<DeviceType>& types,
                                          std::string_view if_empty = "none");

ACCEL_API std::ostream& operator<<(std::ostream& out, DeviceType type);

constexpr int toIndex(DeviceType type) noexcept { return static_cast<int>(type); }

}  // namespace accel
