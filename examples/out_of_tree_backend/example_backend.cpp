// libaccel_example.so: a small, complete accelhooks backend on the plugin
// ABI's C++ adapter (accel/plugin_adapter.h).
//
// Device type "example": pretend devices whose memory is ordinary host memory
// and whose work is done by the time a call returns. It writes only what is
// specific to the device: its configuration, its raw memory (HostSegments)
// and its description. The rest comes from the core, across the C boundary
// (docs/plugin-abi.md):
//  - a synchronous device's current device, streams, events, graph capture
//    (phases, a private pool per capture, the errors a device gives for
//    misuse), copies (std::memcpy: this device's memory is host memory) and
//    fills (the host fill written into that memory);
//  - the caching device allocator and the pinned host memory cache over
//    HostSegments, and with them getDeviceFromPtr, isPinnedPtr, the device
//    allocators, the memory group (memoryStats, emptyCache, ...) and the
//    memory_history group (recordMemoryHistory, memorySnapshot, ...);
//  - Philox generators per device.
// It passes `accel check` for all ten groups: low, high, device, streams,
// events, memory, memory_history, graphs, copies and fill.
//
// The plugin links nothing of libaccel.so and needs only C++17: built once,
// with GCC or clang and either standard library, it loads into every core of
// the same plugin API major version.
//
// Configuration (malformed values are errors naming the variable):
//   ACCEL_EXAMPLE_DEVICES   number of devices, 1 to 8 (default 2)
//   ACCEL_EXAMPLE_MEMORY    memory per device in bytes, at least 64 MiB
//                           (default 1 GiB)
//   ACCEL_ALLOC_CONF        the caching allocator's settings (docs/memory.md)
//
// Thread-safety: every function may be called from any thread.
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "accel/plugin_adapter.h"

namespace example {

using accel::adapter::InvalidArgument;

constexpr const char* kDevicesVar = "ACCEL_EXAMPLE_DEVICES";
constexpr const char* kMemoryVar = "ACCEL_EXAMPLE_MEMORY";
constexpr int kMaxDevices = 8;
constexpr std::size_t kAlignment = 512;

// The environment variable `name` as a whole number in [low, high], or
// `fallback` when unset; anything else is an error naming the variable.
std::uint64_t setting(const char* name, std::uint64_t fallback, std::uint64_t low,
                      std::uint64_t high) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*text == '-' || *end != '\0' || value < low || value > high) {
    throw InvalidArgument(std::string(name) + "='" + text +
                          "': expected a whole number from " + std::to_string(low) +
                          " to " + std::to_string(high));
  }
  return value;
}

// The raw memory the core's caches draw from: whole segments of host memory.
// One serves the devices' memory, another the pinned host memory.
class HostSegments final : public accel::adapter::Memory {
 public:
  explicit HostSegments(std::uint64_t capacity) : capacity_(capacity) {}

  void* allocate(std::int8_t device, std::size_t bytes) override {
    std::atomic<std::uint64_t>& used = used_[static_cast<std::size_t>(device)];
    // nullptr means "the device is full": the core frees its cache and
    // retries, then reports OutOfMemory with the figures from info(). The
    // core holds the device's lock here, so check and add do not race.
    if (capacity_ > 0 && used.load() + bytes > capacity_) return nullptr;
    const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* data = rounded < bytes ? nullptr : std::aligned_alloc(kAlignment, rounded);
    if (data != nullptr) used += bytes;
    return data;
  }

  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override {
    std::free(data);
    used_[static_cast<std::size_t>(device)] -= bytes;
  }

  accel::adapter::MemoryInfo info(std::int8_t device) const noexcept override {
    const std::uint64_t used = used_[static_cast<std::size_t>(device)].load();
    return {capacity_, capacity_ > used ? capacity_ - used : 0};
  }

 private:
  const std::uint64_t capacity_;  // bytes per device; 0 for no limit
  std::array<std::atomic<std::uint64_t>, kMaxDevices> used_{};
};

class ExampleBackend final : public accel::adapter::SynchronousBackend {
 public:
  ExampleBackend()
      : devices_(static_cast<int>(setting(kDevicesVar, 2, 1, kMaxDevices))),
        memory_bytes_(setting(kMemoryVar, std::uint64_t{1} << 30, 64 << 20, UINT64_MAX)),
        device_memory_(memory_bytes_),
        pinned_memory_(0) {}

  int deviceCount() const override { return devices_; }

  // Nothing to start: the "driver" is the host allocator. A real backend
  // connects to its driver in init(); it runs once before any other hook
  // needs it.

  accel::adapter::Memory& deviceMemory() override { return device_memory_; }
  accel::adapter::Memory& pinnedMemory() override { return pinned_memory_; }

  std::string showConfig() const override {
    return "example: " + std::to_string(devices_) + " host-memory devices of " +
           std::to_string(memory_bytes_ >> 20) + " MiB (" + kDevicesVar + ", " +
           kMemoryVar +
           "); synchronous streams, events and graphs; memory cached by the core "
           "caching allocator (ACCEL_ALLOC_CONF)\n";
  }

  accel::adapter::Properties properties(std::int8_t device) const override {
    accel::adapter::Properties properties;
    properties.name = "example host-memory device";
    properties.total_memory_bytes = memory_bytes_;
    properties.multiprocessor_count = 1;
    properties.is_integrated = true;
    properties.uuid = "example-" + std::to_string(device);
    return properties;
  }

 private:
  const int devices_;
  const std::uint64_t memory_bytes_;
  HostSegments device_memory_;
  HostSegments pinned_memory_;
};

// Called by the core after the version negotiation. What it registers
// becomes visible when it returns (the origin "plugin <path>" shows in
// `accel info`); a throw registers nothing and names the reason.
void registerExampleBackend(accel::adapter::Registrar& registrar) {
  registrar.registerSynchronous("example", std::make_unique<ExampleBackend>(),
                                ACCEL_GROUP_DEVICE | ACCEL_GROUP_MEMORY |
                                    ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS |
                                    ACCEL_GROUP_COPIES | ACCEL_GROUP_FILL);
}

}  // namespace example

ACCEL_DEFINE_PLUGIN_ADAPTER("example", "0.1.0", example::registerExampleBackend);
