// DefaultGenerators: the per-device default generators of one backend.
//
// Every backend's getDefaultGenerator(i) has the same contract: one generator
// per device index, created on first use, the same object on every later call,
// -1 meaning the calling thread's current device, and an index outside
// [0, deviceCount) rejected. A backend keeps one DefaultGenerators and forwards
// to get(). Context::manualSeed seeds every device's generator through
// getDefaultGenerator(i), creating the ones not used yet, so that a generator
// first used after the seed still starts from it; forEachCreated() visits only
// those that exist (for state dumps and tests).
//
//   DefaultGenerators defaults_{openregType, deviceCount(),
//                               [this] { return getCurrentDevice(); }};
//   const Generator& getDefaultGeneratorImpl(DeviceIndex i) override {
//     return defaults_.get(i);
//   }
//
// Thread-safety: all methods are thread-safe. After a device's generator
// exists, get() for it is an inline range check and one acquire load; creation
// takes a mutex once per device.
// Lifetime: the generators live as long as this object, and get() returns a
// reference to the stored one (no refcount traffic). Backends keep this object
// in their never-destroyed hooks object, so default generators, and the
// references handed out, are valid for the rest of the process.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "accel/device.h"
#include "accel/export.h"
#include "accel/generator.h"

namespace accel {

class ACCEL_API DefaultGenerators {
 public:
  // Returns the calling thread's current device index of the backend's type.
  using CurrentDeviceFn = std::function<DeviceIndex()>;
  // Creates the default generator of one device (index >= 0).
  using Factory = std::function<Generator(Device)>;

  // `factory` defaults to makePhiloxGenerator(device, kDefaultSeed). Throws
  // InvalidArgument if deviceCount is outside [0, kMaxDevicesPerType] or
  // currentDevice is empty.
  DefaultGenerators(DeviceType type, int deviceCount, CurrentDeviceFn currentDevice,
                    Factory factory = {});
  ~DefaultGenerators();
  DefaultGenerators(const DefaultGenerators&) = delete;
  DefaultGenerators& operator=(const DefaultGenerators&) = delete;

  // The default generator of device `index` (-1: the current device), created
  // on first use. Throws InvalidArgument for an index outside [0, deviceCount)
  // ("device index 5 out of range [0, 2) for 'openreg'"), and whatever the
  // current-device callable or the factory throw (nothing is cached then, so a
  // later call retries). The factory runs under a lock: it must not call get().
  // The reference stays valid, naming the same generator, as long as this
  // object lives.
  [[nodiscard]] const Generator& get(DeviceIndex index = kCurrentDevice) {
    // Inline fast path for a created generator of a valid index: a backend's
    // getDefaultGeneratorImpl is then a range check and one acquire load.
    if (index >= 0 && index < deviceCount_) [[likely]] {
      const Slot& slot = slots_[static_cast<std::size_t>(index)];
      if (slot.created.load(std::memory_order_acquire)) [[likely]]
        return slot.generator;
    }
    return getSlow(index);
  }

  // Calls fn on each generator created so far, in device order. Never creates
  // one. fn runs without any lock held, so it may call get() or seed the
  // generator; a generator created concurrently may or may not be visited.
  void forEachCreated(const std::function<void(const Generator&)>& fn) const;

  [[nodiscard]] DeviceType deviceType() const noexcept { return type_; }
  [[nodiscard]] int deviceCount() const noexcept { return deviceCount_; }

 private:
  struct Slot {
    // Set (release) once `generator` is written; `generator` never changes after.
    std::atomic<bool> created{false};
    Generator generator;
  };

  // -1 resolution, range errors and creation.
  const Generator& getSlow(DeviceIndex index);

  DeviceType type_;
  int deviceCount_;
  CurrentDeviceFn currentDevice_;
  Factory factory_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex createMutex_;
};

}  // namespace accel
