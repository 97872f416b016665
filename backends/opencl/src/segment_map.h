// SegmentMap: the segments a memory handed the core, by address, so that a
// pointer anywhere inside one finds it (the SVM allocation behind a device
// pointer, whether a host pointer is pinned).
//
// Thread-safety: thread-safe (a shared mutex; lookups share it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "types.h"

namespace accel::opencl::detail {

struct Segment {
  void* base = nullptr;
  std::size_t bytes = 0;
  DeviceIndex device = 0;
};

class SegmentMap {
 public:
  void insert(const Segment& segment) {
    std::unique_lock lock(mutex_);
    segments_[address(segment.base)] = segment;
  }
  void erase(const void* base) noexcept {
    std::unique_lock lock(mutex_);
    segments_.erase(address(base));
  }
  // The segment holding `ptr` (interior pointers count). Never throws.
  [[nodiscard]] std::optional<Segment> find(const void* ptr) const noexcept {
    std::shared_lock lock(mutex_);
    auto after = segments_.upper_bound(address(ptr));
    if (after == segments_.begin()) return std::nullopt;
    const Segment& s = std::prev(after)->second;
    if (address(ptr) - address(s.base) >= s.bytes) return std::nullopt;
    return s;
  }

 private:
  static std::uintptr_t address(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p);
  }
  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, Segment> segments_;
};

}  // namespace accel::opencl::detail
