// PerDevice<T>: one T for each device index of a backend, made the first time
// that index is asked for and never destroyed.
//
// A backend keeps per-device state that must outlive static destruction
// (allocators, stream and queue pools: code running at exit may still reach
// them) and must cost one acquire load once made:
//
//   accel::kit::PerDevice<DeviceQueues> queues_;
//   DeviceQueues& queues = queues_.get(index);   // made on first use
//   if (DeviceQueues* q = queues_.find(index)) { ... }   // never makes one
//
// Thread-safety: get() and find() may be called from any thread. Two threads
// that ask for a new index at once may each construct a T; one is kept and
// the other is destroyed before either returns, so T's constructor must have
// no side effects beyond the object (a backend's objects are plain tables).
// Lifetime: the T objects are leaked on purpose; a PerDevice is normally a
// static or a member of a leaked object.
#pragma once

#include <array>
#include <atomic>
#include <utility>

#include "accel/device.h"

namespace accel::kit {

template <typename T>
class PerDevice {
 public:
  // The T of `index`, constructed from `args` if it does not exist yet.
  // `index` must be in [0, kMaxDevicesPerType) (the caller has checked it
  // against its device count). Throws what T's constructor or `new` throws.
  template <typename... Args>
  T& get(DeviceIndex index, Args&&... args) {
    std::atomic<T*>& slot = slots_[static_cast<std::size_t>(index)];
    T* existing = slot.load(std::memory_order_acquire);
    if (existing != nullptr) [[likely]] {
      return *existing;
    }
    auto* fresh = new T(std::forward<Args>(args)...);  // never destroyed
    if (slot.compare_exchange_strong(existing, fresh, std::memory_order_acq_rel)) {
      return *fresh;
    }
    delete fresh;
    return *existing;
  }

  // The T of `index` if get() made it, else null. Never throws.
  [[nodiscard]] T* find(DeviceIndex index) const noexcept {
    return slots_[static_cast<std::size_t>(index)].load(std::memory_order_acquire);
  }

 private:
  std::array<std::atomic<T*>, kMaxDevicesPerType> slots_{};
};

}  // namespace accel::kit
