// libaccel_example.so: the smallest complete accelhooks backend.
//
// Device type "example": two pretend devices whose memory is ordinary host
// memory. It implements the two groups every backend has (low: probes and
// the current device; high: init, primary contexts, generators, device
// memory, pinned memory) and declares no optional group, so calls such as
// getCurrentStream() fail with NotSupported naming the backend and the group.
// A real backend replaces the malloc calls with its driver's and declares
// the groups it implements in the Capabilities it passes to AcceleratorHooks.
//
// Thread-safety: every hook may be called from any thread. The current device
// is per thread; the allocation tables are behind a mutex; the generators are
// thread-safe (DefaultGenerators).
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "accel/accel.h"
#include "accel/default_generators.h"
#include "accel/philox_generator.h"
#include "accel/plugin.h"

namespace example {

constexpr int kDeviceCount = 2;

// Hands out host memory for one device (or pinned host memory) and remembers
// every live block, so that any pointer into a block can be traced back to it.
class TrackingAllocator final : public accel::Allocator {
 public:
  explicit TrackingAllocator(accel::Device device) : device_(device) {}

  accel::DataPtr allocate(std::size_t bytes) override {
    if (bytes == 0) return accel::DataPtr(nullptr, nullptr, nullptr, device_);
    void* data = std::malloc(bytes);
    ACCEL_CHECK(data != nullptr, accel::OutOfMemory, "allocate(", bytes, " bytes) on ",
                device_,
                " failed: the host is out of memory; free some or allocate less");
    auto* block = new Block{this, data};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks_[reinterpret_cast<std::uintptr_t>(data)] = bytes;
    }
    used_.store(true, std::memory_order_release);
    return accel::DataPtr(data, block, &freeBlock, device_);
  }

  accel::Device device() const noexcept override { return device_; }

  // True if `ptr` points into a live block of this allocator.
  bool owns(const void* ptr) const {
    auto address = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto after = blocks_.upper_bound(address);
    if (after == blocks_.begin()) return false;
    auto block = std::prev(after);
    return address < block->first + block->second;
  }

  // True once anything was allocated: the device "has a context" from then on.
  bool used() const noexcept { return used_.load(std::memory_order_acquire); }

 private:
  struct Block {
    TrackingAllocator* owner;
    void* data;
  };

  static void freeBlock(void* context) noexcept {
    auto* block = static_cast<Block*>(context);
    {
      std::lock_guard<std::mutex> lock(block->owner->mutex_);
      block->owner->blocks_.erase(reinterpret_cast<std::uintptr_t>(block->data));
    }
    std::free(block->data);
    delete block;
  }

  accel::Device device_;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, std::size_t> blocks_;  // start -> size
  std::atomic<bool> used_{false};
};

class ExampleHooks final : public accel::AcceleratorHooks {
 public:
  explicit ExampleHooks(accel::DeviceType type)
      : AcceleratorHooks(type, accel::Capabilities{}),
        device_allocators_{TrackingAllocator(accel::Device(type, 0)),
                           TrackingAllocator(accel::Device(type, 1))},
        pinned_(accel::Device(accel::DeviceType::CPU, 0)),
        default_generators_(type, kDeviceCount, [this] { return getCurrentDevice(); }) {}

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return kDeviceCount; }

  accel::DeviceIndex getCurrentDeviceImpl() const override { return currentDevice(); }
  void setCurrentDeviceImpl(accel::DeviceIndex index) override {
    currentDevice() = index;
  }

  // Nothing to start: the "driver" is malloc. A real backend connects to its
  // driver here; Context::lazyInitDevice calls this once per process.
  void initImpl() override {}
  bool hasPrimaryContextImpl(accel::DeviceIndex index) const override {
    return device_allocators_[index].used();
  }

  accel::Generator getDefaultGeneratorImpl(accel::DeviceIndex index) override {
    return default_generators_.get(index);
  }
  accel::Generator getNewGeneratorImpl(accel::DeviceIndex index) override {
    return accel::makePhiloxGenerator(accel::Device(deviceType(), index));
  }

  accel::Device getDeviceFromPtrImpl(const void* ptr) const override {
    for (const TrackingAllocator& allocator : device_allocators_) {
      if (allocator.owns(ptr)) return allocator.device();
    }
    throw accel::InvalidArgument(accel::detail::concat(
        "getDeviceFromPtr(", ptr, "): the pointer is not memory of backend '", name(),
        "'; pass a pointer from getDeviceAllocator()"));
  }
  accel::Allocator& getDeviceAllocatorImpl(accel::DeviceIndex index) override {
    return device_allocators_[index];
  }
  accel::Allocator& getPinnedMemoryAllocatorImpl() override { return pinned_; }
  bool isPinnedPtrImpl(const void* ptr) const override { return pinned_.owns(ptr); }

 private:
  static accel::DeviceIndex& currentDevice() {
    thread_local accel::DeviceIndex index = 0;
    return index;
  }

  std::array<TrackingAllocator, kDeviceCount> device_allocators_;
  TrackingAllocator pinned_;
  accel::DefaultGenerators default_generators_;
};

// Called by the loader, inside try/catch, after the version handshake. What
// it registers becomes visible when it returns (the loader commits the
// registrar; the origin "plugin <path>" shows in `accel info`).
void registerExampleBackend(accel::Registrar& registrar) {
  accel::DeviceType type = registrar.registerDeviceType("example");
  registrar.registerHooks(std::make_unique<ExampleHooks>(type));
}

}  // namespace example

ACCEL_DEFINE_PLUGIN("example", "0.1.0", example::registerExampleBackend);
