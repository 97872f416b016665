// The vocabulary of openreg's plugin: what its parts name devices, streams,
// events and graphs with, the failures they throw, and how messages write
// them. The plugin is built on the plugin adapter (accel/plugin_adapter.h)
// and links nothing of libaccel.so; it may read the core's header-only
// catalogue of hook names (accel/hook_catalogue.h, constexpr), nothing
// that has a symbol in the core (tests/abi's import check holds it to that).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "accel/adapter/failure.h"
#include "accel/hook_catalogue.h"
#include "accel/plugin_abi.h"

namespace accel::openreg::detail {

using adapter::concat;
using adapter::DeviceError;
using adapter::InvalidArgument;
using adapter::NotAvailable;
using adapter::NotSupported;
using adapter::OutOfMemory;

inline constexpr std::string_view kTypeName = "openreg";

using DeviceIndex = std::int8_t;
using StreamId = std::int64_t;
using EventId = std::uint64_t;
using GraphId = std::uint64_t;
inline constexpr StreamId kDefaultStreamId = 0;
inline constexpr EventId kNoEvent = 0;
inline constexpr GraphId kNoGraph = 0;

// A stream of an openreg device: its device and id (accel_stream).
using Stream = accel_stream;
[[nodiscard]] constexpr Stream makeStream(DeviceIndex device, StreamId id) noexcept {
  Stream s{};
  s.id = id;
  s.device = device;
  return s;
}

enum class CaptureMode : std::int32_t {
  Global = ACCEL_CAPTURE_GLOBAL,
  ThreadLocal = ACCEL_CAPTURE_THREAD_LOCAL,
  Relaxed = ACCEL_CAPTURE_RELAXED,
};

struct EventFlags {
  bool enable_timing = false;
  bool blocking_sync = false;
  bool interprocess = false;
  [[nodiscard]] static constexpr EventFlags fromBits(std::uint32_t bits) noexcept {
    return {(bits & ACCEL_EVENT_ENABLE_TIMING) != 0,
            (bits & ACCEL_EVENT_BLOCKING_SYNC) != 0,
            (bits & ACCEL_EVENT_INTERPROCESS) != 0};
  }
};

// "openreg:1" and "stream 3 on openreg:1", as the core writes devices and
// streams in its own messages.
struct DeviceName {
  DeviceIndex index;
};
inline std::ostream& operator<<(std::ostream& out, DeviceName device) {
  return out << kTypeName << ':' << static_cast<int>(device.index);
}
struct StreamName {
  Stream stream;
};
inline std::ostream& operator<<(std::ostream& out, StreamName s) {
  return out << "stream " << s.stream.id << " on " << DeviceName{s.stream.device};
}

// A hook's name, from the core's catalogue.
[[nodiscard]] constexpr std::string_view name(HookId hook) noexcept {
  return hookInfo(hook).name;
}

}  // namespace accel::openreg::detail
