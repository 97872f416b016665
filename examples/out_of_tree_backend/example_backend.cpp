// libaccel_example.so: a small, complete accelhooks backend built on the
// backend kit (accel/kit/*.h).
//
// Device type "example": pretend devices whose memory is ordinary host memory
// and whose work is done by the time a call returns. Subclassing
// kit::SynchronousDeviceHooks gives it, without a line here: the per-thread
// current device, streams and events, deviceSynchronize, generators, and
// getDeviceFromPtr / isPinnedPtr from the kit's AddressMap. This file adds
// what is specific to the device: its configuration, its memory and its
// description. It declares the device, streams and events groups and passes
// `accel check` for them and for the low and high groups.
//
// A real backend replaces std::aligned_alloc with its driver's allocation and
// overrides whatever its device does asynchronously.
//
// Configuration (malformed values are errors naming the variable):
//   ACCEL_EXAMPLE_DEVICES   number of devices, 1 to 8 (default 2)
//   ACCEL_EXAMPLE_MEMORY    memory per device, e.g. "256MiB" (default 1GiB)
//
// Thread-safety: every hook may be called from any thread (the kit's parts are
// thread-safe; the allocators only touch the thread-safe AddressMap).
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "accel/accel.h"
#include "accel/kit/config.h"
#include "accel/kit/synchronous_device.h"
#include "accel/plugin.h"

namespace example {

constexpr const char* kDevicesVar = "ACCEL_EXAMPLE_DEVICES";
constexpr const char* kMemoryVar = "ACCEL_EXAMPLE_MEMORY";
constexpr std::size_t kAlignment = 256;

class ExampleHooks;

// Host memory for one device (or pinned host memory, for device -1), recorded
// in the hooks' address map while it is alive.
class HostMemoryAllocator final : public accel::Allocator {
 public:
  HostMemoryAllocator(ExampleHooks& hooks, accel::Device device, accel::DeviceIndex index)
      : hooks_(hooks), device_(device), index_(index) {}
  accel::DataPtr allocate(std::size_t bytes) override;
  accel::Device device() const noexcept override { return device_; }

 private:
  ExampleHooks& hooks_;
  accel::Device device_;
  accel::DeviceIndex index_;  // -1: pinned host memory
};

class ExampleHooks final : public accel::kit::SynchronousDeviceHooks {
 public:
  explicit ExampleHooks(accel::DeviceType type, const accel::kit::ConfigReader& env = {})
      : SynchronousDeviceHooks(
            type, accel::Capabilities{accel::HookGroup::Device},
            static_cast<int>(env.count(kDevicesVar, 2, 1, 8, "a device count"))),
        memory_bytes_(env.byteSize(kMemoryVar, std::uint64_t{1} << 30, 1 << 20)),
        pinned_(*this, accel::Device(accel::DeviceType::CPU), -1) {
    for (int i = 0; i < deviceCount(); ++i) {
      const auto index = static_cast<accel::DeviceIndex>(i);
      device_allocators_.push_back(std::make_unique<HostMemoryAllocator>(
          *this, accel::Device(type, index), index));
    }
  }

  // For the allocators: record, forget, and mark the device as used.
  void track(void* data, std::size_t bytes, const accel::Device& device,
             accel::DeviceIndex index) {
    addresses().insert(
        data, bytes, device,
        index < 0 ? accel::kit::MemoryKind::Pinned : accel::kit::MemoryKind::Device);
    if (index >= 0) markDeviceUsed(index);
  }
  void untrack(void* data) noexcept { addresses().erase(data); }
  [[nodiscard]] std::uint64_t memoryBytes() const noexcept { return memory_bytes_; }

 protected:
  // Nothing to start: the "driver" is the host allocator. A real backend
  // connects to its driver here; it runs once before any other hook needs it.
  void initImpl() override {}

  accel::Allocator& getDeviceAllocatorImpl(accel::DeviceIndex index) override {
    return *device_allocators_[static_cast<std::size_t>(index)];
  }
  accel::Allocator& getPinnedMemoryAllocatorImpl() override { return pinned_; }

  std::string showConfigImpl() const override {
    return accel::detail::concat("example: ", deviceCount(), " host-memory devices of ",
                                 accel::kit::formatByteSize(memory_bytes_), " (",
                                 kDevicesVar, ", ", kMemoryVar,
                                 "); synchronous streams and events\n");
  }

  accel::DeviceProperties getDevicePropertiesImpl(
      accel::DeviceIndex index) const override {
    accel::DeviceProperties properties;
    properties.name = "example host-memory device";
    properties.total_memory_bytes = memory_bytes_;
    properties.multiprocessor_count = 1;
    properties.is_integrated = true;
    properties.uuid = accel::detail::concat("example-", int(index));
    return properties;
  }

 private:
  const std::uint64_t memory_bytes_;
  std::vector<std::unique_ptr<HostMemoryAllocator>> device_allocators_;
  HostMemoryAllocator pinned_;
};

accel::DataPtr HostMemoryAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return accel::DataPtr(nullptr, nullptr, nullptr, device_);
  ACCEL_CHECK(index_ < 0 || bytes <= hooks_.memoryBytes(), accel::OutOfMemory,
              "allocate(", bytes, " bytes) on ", device_, ": the device has only ",
              accel::kit::formatByteSize(hooks_.memoryBytes()),
              "; allocate less or raise ", kMemoryVar);
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* data = rounded < bytes ? nullptr : std::aligned_alloc(kAlignment, rounded);
  ACCEL_CHECK(data != nullptr, accel::OutOfMemory, "allocate(", bytes, " bytes) on ",
              device_, " failed: the host is out of memory; free some or allocate less");
  try {
    hooks_.track(data, rounded, device_, index_);
  } catch (...) {
    std::free(data);
    throw;
  }
  struct Block {
    ExampleHooks* hooks;
    void* data;
  };
  return accel::DataPtr(
      data, new Block{&hooks_, data},
      [](void* context) noexcept {
        auto* block = static_cast<Block*>(context);
        block->hooks->untrack(block->data);
        std::free(block->data);
        delete block;
      },
      device_);
}

// Called by the loader, inside try/catch, after the version handshake. What
// it registers becomes visible when it returns (the loader commits the
// registrar; the origin "plugin <path>" shows in `accel info`).
void registerExampleBackend(accel::Registrar& registrar) {
  accel::DeviceType type = registrar.registerDeviceType("example");
  registrar.registerHooks(std::make_unique<ExampleHooks>(type));
}

}  // namespace example

ACCEL_DEFINE_PLUGIN("example", "0.1.0", example::registerExampleBackend);
