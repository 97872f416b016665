// Fake library handles for handle pool tests and benchmarks.
//
// FakeHandlePool<Tag> describes a pool whose handles are heap objects that
// count themselves, so a test can see every create and destroy. Each Tag gives
// a distinct pool (pools are process-wide singletons per traits type), which
// keeps tests independent of each other. kSwitchDevice is false: no backend
// needs to be registered.
#pragma once

#include <atomic>

#include "accel/device.h"
#include "accel/device_type.h"

namespace accel::testing {

struct FakeHandle {
  DeviceIndex device;
  int serial;
};

template <typename Tag>
struct FakeHandlePool {
  using Handle = FakeHandle*;
  static constexpr DeviceType kDeviceType = DeviceType::CPU;
  static constexpr bool kSwitchDevice = false;
  static constexpr const char* kName = "fake";

  static Handle create(DeviceIndex device) {
    live.fetch_add(1, std::memory_order_relaxed);
    return new FakeHandle{device, serial.fetch_add(1, std::memory_order_relaxed) + 1};
  }
  static void destroy(Handle handle) noexcept {
    live.fetch_sub(1, std::memory_order_relaxed);
    delete handle;
  }

  // Handles created and not yet destroyed.
  static inline std::atomic<int> live{0};
  static inline std::atomic<int> serial{0};
};

}  // namespace accel::testing
