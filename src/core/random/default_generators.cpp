#include "accel/default_generators.h"

#include <utility>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/philox_generator.h"

namespace accel {

DefaultGenerators::DefaultGenerators(DeviceType type, int deviceCount,
                                     CurrentDeviceFn currentDevice, Factory factory)
    : type_(type),
      deviceCount_(deviceCount),
      currentDevice_(std::move(currentDevice)),
      factory_(std::move(factory)) {
  ACCEL_CHECK(deviceCount >= 0 && deviceCount <= kMaxDevicesPerType, InvalidArgument,
              "DefaultGenerators for '", deviceTypeName(type), "': device count ",
              deviceCount, " is outside [0, ", kMaxDevicesPerType,
              "]; pass the backend's ", hookInfo(HookId::deviceCount).name, "()");
  ACCEL_CHECK(currentDevice_ != nullptr, InvalidArgument, "DefaultGenerators for '",
              deviceTypeName(type),
              "': the current-device callable is empty; pass one that returns the "
              "backend's ",
              hookInfo(HookId::getCurrentDevice).name, "()");
  if (!factory_) {
    factory_ = [](Device device) { return makePhiloxGenerator(device, kDefaultSeed); };
  }
  slots_ = std::make_unique<Slot[]>(static_cast<std::size_t>(deviceCount));
}

DefaultGenerators::~DefaultGenerators() = default;

const Generator& DefaultGenerators::getSlow(DeviceIndex index) {
  const bool current = index == kCurrentDevice;
  if (current) {
    index = currentDevice_();
  }
  ACCEL_CHECK(index >= 0 && index < deviceCount_, InvalidArgument,
              current ? "current " : "", "device index ", static_cast<int>(index),
              " out of range [0, ", deviceCount_, ") for '", deviceTypeName(type_),
              "' (asked for its default generator); pass an index below the device "
              "count, or -1 for the current device");
  Slot& slot = slots_[static_cast<std::size_t>(index)];
  if (slot.created.load(std::memory_order_acquire)) [[likely]] {
    return slot.generator;
  }
  std::lock_guard<std::mutex> lock(createMutex_);
  if (!slot.created.load(std::memory_order_relaxed)) {
    Generator made = factory_(Device(type_, index));
    ACCEL_CHECK(made.defined(), InvalidArgument, "DefaultGenerators for '",
                deviceTypeName(type_),
                "': the factory returned an undefined Generator "
                "for device ",
                static_cast<int>(index),
                "; it must return a generator such as makePhiloxGenerator(device)");
    // Default generators live as long as the process: copies of them need
    // count no references (Generator::immortal).
    slot.generator = Generator::immortal(std::move(made));
    slot.created.store(true, std::memory_order_release);
  }
  return slot.generator;
}

void DefaultGenerators::forEachCreated(
    const std::function<void(const Generator&)>& fn) const {
  for (int i = 0; i < deviceCount_; ++i) {
    const Slot& slot = slots_[static_cast<std::size_t>(i)];
    if (slot.created.load(std::memory_order_acquire)) {
      fn(slot.generator);
    }
  }
}

}  // namespace accel
