// SegmentMap: the segments a plugin's memory handed the core, by address, so
// that a pointer anywhere inside one finds it (OpenCL: the SVM allocation
// behind a device pointer; OpenCL and CUDA: whether host memory came from the
// core's pinned cache, whose segments are exactly what the plugin's pinned
// memory allocated). Part of the plugin adapter (accel/plugin_adapter.h):
// header-only, C++17.
//
// Thread-safety: thread-safe (a shared mutex; lookups share it).
#ifndef ACCEL_ADAPTER_SEGMENT_MAP_H
#define ACCEL_ADAPTER_SEGMENT_MAP_H

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>

#pragma GCC visibility push(hidden)

namespace accel::adapter {

struct Segment {
  void* base = nullptr;
  std::size_t bytes = 0;
  std::int8_t device = 0;
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

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_SEGMENT_MAP_H
