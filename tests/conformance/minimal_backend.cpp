#include "minimal_backend.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "accel/context.h"
#include "accel/default_generators.h"
#include "accel/device_properties.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"
#include "accel/plugin.h"

namespace accel::conformance::testing {
namespace {

// Current device per thread, one slot per device type id (zero until set).
thread_local std::array<DeviceIndex, 256> tl_current_device{};
// Current stream id per thread, device type id and device (default until set).
thread_local std::array<std::array<StreamId, kMaxDevicesPerType>, 256>
    tl_current_stream{};

Capabilities capabilitiesFor(Defect defect) {
  if (defect == Defect::StreamsWithoutDefaultOrNewStream)
    return Capabilities{HookGroup::Device, HookGroup::Streams};
  return Capabilities{};
}

class MinimalHooks;

// Host memory standing in for one device's memory, or for pinned memory.
class RangeAllocator final : public Allocator {
 public:
  RangeAllocator(MinimalHooks& owner, Device device) : owner_(owner), device_(device) {}
  DataPtr allocate(std::size_t bytes) override;
  Device device() const noexcept override { return device_; }

 private:
  MinimalHooks& owner_;
  Device device_;
};

struct Allocation {
  MinimalHooks* owner;
  std::unique_ptr<char[]> memory;
  std::size_t size;
  Device device;  // cpu for pinned memory
};

class MinimalHooks final : public AcceleratorHooks {
 public:
  MinimalHooks(DeviceType type, int count, Defect defect)
      : AcceleratorHooks(type, capabilitiesFor(defect)),
        count_(count),
        primary_(std::make_unique<std::atomic<bool>[]>(count)),
        generators_(type, count, [this] { return getCurrentDevice(); }),
        pinned_(*this, Device(DeviceType::CPU, 0)) {
    for (int i = 0; i < count; ++i) {
      device_allocators_.push_back(
          std::make_unique<RangeAllocator>(*this, Device(type, DeviceIndex(i))));
    }
  }

  DataPtr track(std::size_t bytes, Device device) {
    auto* allocation = new Allocation{
        this, std::make_unique<char[]>(bytes == 0 ? 1 : bytes), bytes, device};
    void* data = allocation->memory.get();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      allocations_[reinterpret_cast<std::uintptr_t>(data)] = allocation;
    }
    if (!device.isCpu()) primary_[device.index()].store(true, std::memory_order_release);
    return DataPtr(data, allocation, &MinimalHooks::release, device);
  }

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return count_ > 0; }
  int deviceCountImpl() const override { return count_; }
  DeviceIndex getCurrentDeviceImpl() const override {
    return tl_current_device[static_cast<std::uint8_t>(deviceType())];
  }
  void setCurrentDeviceImpl(DeviceIndex index) override {
    tl_current_device[static_cast<std::uint8_t>(deviceType())] = index;
  }
  void initImpl() override {}
  bool hasPrimaryContextImpl(DeviceIndex index) const override {
    return primary_[index].load(std::memory_order_acquire);
  }
  const Generator& getDefaultGeneratorImpl(DeviceIndex index) override {
    return generators_.get(index);
  }
  Generator getNewGeneratorImpl(DeviceIndex index) override {
    return makePhiloxGenerator(Device(deviceType(), index));
  }
  Device getDeviceFromPtrImpl(const void* ptr) const override {
    const Allocation* allocation = find(ptr);
    ACCEL_CHECK(allocation != nullptr && !allocation->device.isCpu(), InvalidArgument,
                hookInfo(HookId::getDeviceFromPtr).name, "(): ", ptr,
                " is not memory of '", name(),
                "'; pass a pointer allocated by its device allocator");
    return allocation->device;
  }
  Allocator& getPinnedMemoryAllocatorImpl() override { return pinned_; }
  bool isPinnedPtrImpl(const void* ptr) const override {
    const Allocation* allocation = find(ptr);
    return allocation != nullptr && allocation->device.isCpu();
  }
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override {
    return *device_allocators_[index];
  }

  // The device and streams groups, declared only with
  // Defect::StreamsWithoutDefaultOrNewStream; getDefaultStreamImpl and
  // getNewStreamImpl are left out on purpose. Work is synchronous.
  void deviceSynchronizeImpl(DeviceIndex) override {}
  std::string showConfigImpl() const override { return "minimal backend"; }
  DeviceProperties getDevicePropertiesImpl(DeviceIndex index) const override {
    DeviceProperties properties;
    properties.name = "minimal device";
    properties.uuid = "minimal-" + std::to_string(int(index));
    return properties;
  }
  Stream getCurrentStreamImpl(DeviceIndex index) const override {
    return Stream(Device(deviceType(), index), currentStreams()[index]);
  }
  void setCurrentStreamImpl(Stream stream) override {
    currentStreams()[stream.device.index()] = stream.id;
  }
  bool queryStreamImpl(Stream) const override { return true; }
  void synchronizeStreamImpl(Stream) const override {}

 private:
  std::array<StreamId, kMaxDevicesPerType>& currentStreams() const {
    return tl_current_stream[static_cast<std::uint8_t>(deviceType())];
  }

  static void release(void* context) noexcept {
    auto* allocation = static_cast<Allocation*>(context);
    {
      std::lock_guard<std::mutex> lock(allocation->owner->mutex_);
      allocation->owner->allocations_.erase(
          reinterpret_cast<std::uintptr_t>(allocation->memory.get()));
    }
    delete allocation;
  }

  // The allocation containing ptr (interior pointers included), or null.
  const Allocation* find(const void* ptr) const {
    auto address = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = allocations_.upper_bound(address);
    if (it == allocations_.begin()) return nullptr;
    --it;
    const Allocation* allocation = it->second;
    return address < it->first + allocation->size ? allocation : nullptr;
  }

  const int count_;
  std::unique_ptr<std::atomic<bool>[]> primary_;
  DefaultGenerators generators_;
  RangeAllocator pinned_;
  std::vector<std::unique_ptr<RangeAllocator>> device_allocators_;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, Allocation*> allocations_;  // by start address
};

DataPtr RangeAllocator::allocate(std::size_t bytes) {
  // An allocator of the backend's own: it refuses in a fork child itself.
  refuseIfPoisonedByFork(owner_.deviceType(), "allocate()");
  return owner_.track(bytes, device_);
}

}  // namespace

std::unique_ptr<AcceleratorHooks> makeMinimalBackend(DeviceType type, int device_count,
                                                     Defect defect) {
  return std::make_unique<MinimalHooks>(type, device_count, defect);
}

AcceleratorHooks& registerMinimalBackend(std::string_view type_name, int device_count,
                                         Defect defect) {
  return registerHooks(
      makeMinimalBackend(registerDeviceType(type_name), device_count, defect),
      "registerMinimalBackend (tests/conformance)");
}

}  // namespace accel::conformance::testing
