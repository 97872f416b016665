// libaccel_example.so: a small, complete accelhooks backend built on the
// backend kit (accel/kit/*.h) and the core caching allocator (accel/memory/).
//
// Device type "example": pretend devices whose memory is ordinary host memory
// and whose work is done by the time a call returns. It writes only what is
// specific to the device: its configuration, its raw memory (HostSegments) and
// its description. The rest comes from the core:
//  - kit::SynchronousCachingHooks (over kit::SynchronousDeviceHooks): the
//    current device, streams and events, generators, getDeviceFromPtr /
//    isPinnedPtr from the kit's AddressMap, a device allocator per device
//    over the caching allocator, graph capture (phases, a private pool per
//    capture, the errors a device gives for misuse) and copies (std::memcpy:
//    this device's memory is host memory);
//  - memory::CachingAllocator, through CachingAllocatorHooks: the cache, the
//    out-of-memory path, the memory group (memoryStats, emptyCache, ...) and
//    the memory_history group (recordMemoryHistory, memorySnapshot, ...);
//  - memory::PinnedCachingAllocator: cached pinned host memory.
// It passes `accel check` for all nine groups: low, high, device, streams,
// events, memory, memory_history, graphs and copies.
//
// A real backend calls its driver's allocate/free in HostSegments, overrides
// what its device does asynchronously, and leaks rather than frees in a fork()
// child what was allocated before the fork (openreg's fork_state.h).
//
// Configuration (malformed values are errors naming the variable):
//   ACCEL_EXAMPLE_DEVICES   number of devices, 1 to 8 (default 2)
//   ACCEL_EXAMPLE_MEMORY    memory per device, at least 64MiB (default 1GiB)
//   ACCEL_ALLOC_CONF        the caching allocator's settings (docs/memory.md)
//
// Thread-safety: every hook may be called from any thread.
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "accel/accel.h"
#include "accel/kit/config.h"
#include "accel/kit/synchronous_caching_hooks.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "accel/plugin_entry.h"

namespace example {

constexpr const char* kDevicesVar = "ACCEL_EXAMPLE_DEVICES";
constexpr const char* kMemoryVar = "ACCEL_EXAMPLE_MEMORY";
constexpr int kMaxDevices = 8;
constexpr std::size_t kAlignment = 512;

using accel::kit::MemoryKind;

// The raw memory the caching allocators draw from: whole segments of host
// memory, each recorded in the kit's address map while it lives, so that
// getDeviceFromPtr and isPinnedPtr resolve every block cut from it. One
// source serves the devices' memory, another the pinned host memory (which
// the pinned cache asks for as device 0).
class HostSegments final : public accel::memory::SegmentSource {
 public:
  // capacity: bytes per device; 0 for no limit.
  HostSegments(accel::kit::AddressMap& addresses, accel::DeviceType type, MemoryKind kind,
               std::uint64_t capacity)
      : addresses_(addresses), type_(type), kind_(kind), capacity_(capacity) {}

  void* allocateSegment(accel::DeviceIndex index, std::size_t bytes) override {
    std::atomic<std::uint64_t>& used = used_[static_cast<std::size_t>(index)];
    // nullptr means "the device is full": the allocator frees its cache and
    // retries, then reports OutOfMemory with the figures from memoryInfo. The
    // allocator holds the device's lock here, so check and add do not race.
    if (capacity_ > 0 && used.load() + bytes > capacity_) return nullptr;
    const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* data = rounded < bytes ? nullptr : std::aligned_alloc(kAlignment, rounded);
    if (data == nullptr) return nullptr;
    try {
      addresses_.insert(data, bytes, deviceOf(index), kind_);
    } catch (...) {
      std::free(data);
      throw;
    }
    used += bytes;
    return data;
  }

  void freeSegment(accel::DeviceIndex index, void* data,
                   std::size_t bytes) noexcept override {
    addresses_.erase(data);
    std::free(data);
    used_[static_cast<std::size_t>(index)] -= bytes;
  }

  DeviceMemoryInfo memoryInfo(accel::DeviceIndex index) const noexcept override {
    const std::uint64_t used = used_[static_cast<std::size_t>(index)].load();
    return {capacity_, capacity_ > used ? capacity_ - used : 0};
  }

 private:
  accel::Device deviceOf(accel::DeviceIndex index) const {
    return kind_ == MemoryKind::Pinned ? accel::Device(accel::DeviceType::CPU)
                                       : accel::Device(type_, index);
  }

  accel::kit::AddressMap& addresses_;
  const accel::DeviceType type_;
  const MemoryKind kind_;
  const std::uint64_t capacity_;
  std::array<std::atomic<std::uint64_t>, kMaxDevices> used_{};
};

class ExampleHooks final : public accel::kit::SynchronousCachingHooks {
 public:
  explicit ExampleHooks(accel::DeviceType type, const accel::kit::ConfigReader& env = {})
      : SynchronousCachingHooks(
            type,
            accel::Capabilities{accel::HookGroup::Device, accel::HookGroup::Memory,
                                accel::HookGroup::MemoryHistory, accel::HookGroup::Graphs,
                                accel::HookGroup::Copies},
            static_cast<int>(
                env.count(kDevicesVar, 2, 1, kMaxDevices, "a device count"))),
        memory_bytes_(env.byteSize(kMemoryVar, std::uint64_t{1} << 30, 64 << 20)),
        device_memory_(addresses(), type, MemoryKind::Device, memory_bytes_),
        pinned_memory_(addresses(), type, MemoryKind::Pinned, 0),
        cache_(type, deviceCount(), device_memory_,
               accel::memory::allocatorSettingsFromEnvironment()),
        pinned_cache_(pinned_memory_) {}

 protected:
  // Nothing to start: the "driver" is the host allocator. A real backend
  // connects to its driver here; it runs once before any other hook needs it.
  void initImpl() override {}

  // The memory, memory_history and graphs groups and the device allocators
  // draw on it (the kit's SynchronousCachingHooks).
  accel::memory::CachingAllocator& cachingAllocator() const override { return cache_; }

  accel::Allocator& getPinnedMemoryAllocatorImpl() override { return pinned_cache_; }
  // hostMemoryStats reports on it.
  accel::memory::PinnedCachingAllocator* pinnedCachingAllocator() const override {
    return &pinned_cache_;
  }

  std::string showConfigImpl() const override {
    return accel::detail::concat(
        "example: ", deviceCount(), " host-memory devices of ",
        accel::kit::formatByteSize(memory_bytes_), " (", kDevicesVar, ", ", kMemoryVar,
        "); synchronous streams, events and graphs; memory "
        "cached by the core caching allocator (ACCEL_ALLOC_CONF)\n");
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
  HostSegments device_memory_;
  HostSegments pinned_memory_;
  mutable accel::memory::CachingAllocator cache_;
  mutable accel::memory::PinnedCachingAllocator pinned_cache_;
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
