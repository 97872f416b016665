// The vocabulary of the OpenCL plugin: what its parts name devices, streams,
// events and graphs with, the failures they throw, and how messages write
// them. The plugin is built on the plugin adapter (accel/plugin_adapter.h)
// and links nothing of libaccel.so; it may read the core's header-only
// catalogue of hook names (accel/hook_catalogue.h, constexpr), nothing that
// has a symbol in the core (tests/abi's import check holds it to that).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"
#include "accel/adapter/segment_map.h"
#include "accel/hook_catalogue.h"
#include "accel/plugin_abi.h"

namespace accel::opencl::detail {

using adapter::concat;
using adapter::DeviceError;
using adapter::InvalidArgument;
using adapter::NotAvailable;
using adapter::NotSupported;
using adapter::OutOfMemory;
using adapter::Segment;
using adapter::SegmentMap;

inline constexpr std::string_view kTypeName = "opencl";
// The most devices one type may have (the core's kMaxDevicesPerType).
inline constexpr int kMaxDevices = 128;

using DeviceIndex = std::int8_t;
using StreamId = std::int64_t;
using EventId = std::uint64_t;
using GraphId = std::uint64_t;
inline constexpr StreamId kDefaultStreamId = 0;

// A stream of an OpenCL device: its device and id (accel_stream).
using Stream = accel_stream;
[[nodiscard]] constexpr Stream makeStream(DeviceIndex device, StreamId id) noexcept {
  Stream s{};
  s.id = id;
  s.device = device;
  return s;
}
using adapter::sameStream;

// "opencl:1" and "stream 3 on opencl:1", as the core writes devices and
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

}  // namespace accel::opencl::detail
