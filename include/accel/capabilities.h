// HookGroup and Capabilities: which parts of the hooks contract a backend
// implements.
//
// The low and high groups (probes, current device, generators, pointers,
// pinned memory) are part of every backend. The optional groups are declared
// by the backend in its AcceleratorHooks constructor; a call into a group it
// did not declare fails with NotSupported naming the backend and the group,
// and the conformance suite (`accel check`) runs exactly the declared groups.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "accel/export.h"

namespace accel {

enum class HookGroup : std::uint8_t {
  Low = 0,        // isBuilt, isAvailable, deviceCount, current device
  High,           // init, primary context, generators, pointers, pinned memory
  Device,         // deviceSynchronize, showConfig, getDeviceProperties
  Streams,        // current/default/new streams, query, synchronize
  Events,         // record, block, query, synchronize, elapsedTime
  Memory,         // memoryStats, resetPeakMemoryStats, emptyCache
  MemoryHistory,  // recordMemoryHistory, memorySnapshot, OOM observers
  Graphs,         // capture, instantiate, replay
  Copies,         // host <-> device, device <-> device copies on a stream
  Fill,           // random fills of device memory (accel/device_fill.h)
};
// Whoever adds a group moves capabilities.cpp's name table to it.
inline constexpr int kNumHookGroups = 10;

// "low", "high", "device", "streams", "events", "memory", "memory_history",
// "graphs", "copies", "fill".
ACCEL_API std::string_view hookGroupName(HookGroup group) noexcept;

class Capabilities {
 public:
  // Low and High are always present.
  constexpr Capabilities() noexcept : bits_(bit(HookGroup::Low) | bit(HookGroup::High)) {}
  constexpr Capabilities(std::initializer_list<HookGroup> groups) noexcept
      : Capabilities() {
    for (HookGroup g : groups) bits_ |= bit(g);
  }

  [[nodiscard]] constexpr bool has(HookGroup group) const noexcept {
    return (bits_ & bit(group)) != 0;
  }
  [[nodiscard]] constexpr Capabilities with(HookGroup group) const noexcept {
    Capabilities out = *this;
    out.bits_ |= bit(group);
    return out;
  }
  [[nodiscard]] constexpr std::uint32_t bits() const noexcept { return bits_; }
  // The set whose bits() are `bits` (Low and High are always added).
  [[nodiscard]] static constexpr Capabilities fromBits(std::uint32_t bits) noexcept {
    Capabilities out;
    out.bits_ |= bits & ((1u << kNumHookGroups) - 1);
    return out;
  }
  // Comma-separated group names, e.g. "low, high, streams".
  [[nodiscard]] ACCEL_API std::string str() const;

  friend constexpr bool operator==(Capabilities, Capabilities) = default;

 private:
  static constexpr std::uint32_t bit(HookGroup g) noexcept {
    return 1u << static_cast<unsigned>(g);
  }
  std::uint32_t bits_;
};

}  // namespace accel
