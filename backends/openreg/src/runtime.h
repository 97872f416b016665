// Runtime: the simulated devices of openreg, shared by its hooks and its API.
//
// init() reads the configuration, reserves one PROT_NONE address range for
// all devices (device i owns [base + i * stride, base + i * stride + capacity)),
// so that the device of any pointer is one subtraction and one division
// away, and builds each device's memory, execution units, fault state and
// stream queues (their workers start on first use).
//
// Streams: id 0 is a device's default stream; ids 1.. form the pool that
// getNewStream hands out round-robin, kPoolStreamsPerPriority per priority
// level. The current device (per thread) and the current stream (per thread
// and device) live in a kit::ThreadCurrent; the devices' address ranges and the
// pinned host buffers in one kit::AddressMap, so getDeviceFromPtr and
// isPinnedPtr are one lookup.
//
// The runtime is openreg's own: its API (allocate, launchKernel, fault
// injection) initialises it directly through readyRuntime(), never through
// the context, so using openreg never triggers plugin autoload.
//
// Thread-safety: all members are thread-safe. Lifetime: one object for the
// process, never destroyed, so detached workers and static destructors that
// free device memory can always reach it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "accel/allocator.h"
#include "accel/device.h"
#include "accel/kit/address_map.h"
#include "accel/kit/caching_device_allocator.h"
#include "accel/kit/thread_current.h"
#include "accel/memory/caching_allocator.h"
#include "accel/openreg/config.h"
#include "accel/stream.h"
#include "device_faults.h"
#include "device_memory.h"
#include "events.h"
#include "graphs.h"
#include "stream_queue.h"
#include "unit_scheduler.h"

namespace accel::openreg::detail {

inline constexpr int kLowestPriority = 0;
inline constexpr int kGreatestPriority = 2;
inline constexpr int kPriorityLevels = kGreatestPriority - kLowestPriority + 1;
inline constexpr int kPoolStreamsPerPriority = 4;
inline constexpr int kStreamsPerDevice = 1 + kPriorityLevels * kPoolStreamsPerPriority;

class Runtime;
struct DeviceState;

// The Detour of openreg's device allocators (getDeviceAllocator(i), a
// kit::CachingDeviceAllocator each): a device's allocator is diverted while
// the device is unused, lost or set to be lost, an allocation failure is
// armed, or in a fork child (Runtime::refreshDiversion), and then every
// request goes through Runtime::allocate, which checks and reports each case.
class AllocationChecks final : public kit::CachingDeviceAllocator::Detour {
 public:
  explicit AllocationChecks(Runtime& runtime) noexcept : runtime_(runtime) {}
  [[nodiscard]] DataPtr allocate(kit::CachingDeviceAllocator& allocator,
                                 std::size_t bytes) override;
  // The cache's OutOfMemory with openreg's advice.
  [[noreturn]] void outOfMemory(const OutOfMemory& error,
                                const kit::CachingDeviceAllocator& allocator,
                                std::size_t bytes) override;

 private:
  Runtime& runtime_;
};

struct DeviceState {
  DeviceState(Device device, std::byte* base, std::size_t capacity, std::size_t page_size,
              const Config& config);

  const Device device;
  DeviceMemory memory;
  UnitScheduler units;
  DeviceFaults faults;
  std::vector<std::unique_ptr<StreamQueue>> streams;  // index = StreamId
  std::array<std::atomic<unsigned>, kPriorityLevels> next_pool_stream{};
  std::atomic<bool> active{false};  // hasPrimaryContext
  // getDeviceAllocator(i): made by init once the caching allocator exists.
  std::optional<kit::CachingDeviceAllocator> allocator;
};

class Runtime {
 public:
  static Runtime& instance() noexcept;

  // Device count from the configuration, without initialising; 0 when the
  // environment is malformed. Never throws.
  [[nodiscard]] int probeDeviceCount() noexcept;
  // Initialises the devices once; throws InvalidArgument for a malformed
  // environment, NotAvailable when the address range cannot be reserved.
  // A failed init can be retried.
  void init();
  [[nodiscard]] bool initialized() const noexcept {
    return initialized_.load(std::memory_order_acquire);
  }
  // Only after init().
  [[nodiscard]] const Config& config() const noexcept { return config_; }
  [[nodiscard]] int deviceCount() const noexcept {
    return static_cast<int>(devices_.size());
  }

  // Device `index` (checked; -1 is not resolved here), marked active. Throws
  // InvalidArgument for a bad index, DeviceError in a fork child.
  [[nodiscard]] DeviceState& device(DeviceIndex index, std::string_view what);
  // The per-thread current device and streams. Never throws.
  [[nodiscard]] kit::ThreadCurrent& current() noexcept { return current_; }
  // True while failNthAllocation has an allocation to fail. Never throws.
  [[nodiscard]] bool allocationFaultArmed() const noexcept {
    return fail_allocation_countdown_.load(std::memory_order_relaxed) != 0;
  }
  // Device ranges (from init) and live pinned host buffers.
  [[nodiscard]] kit::AddressMap& addresses() noexcept { return addresses_; }

  // True once device `index` was used. Never throws.
  [[nodiscard]] bool isActive(DeviceIndex index) const noexcept;
  // The device whose range holds ptr. Never throws.
  [[nodiscard]] std::optional<DeviceIndex> deviceOfAddress(
      const void* ptr) const noexcept;

  // Allocates on device `index` for the calling thread's current stream there
  // (from the graph's private pool while that stream captures).
  [[nodiscard]] DataPtr allocate(DeviceIndex index, std::size_t bytes);
  // The live allocation holding [ptr, ptr + bytes), which must be on `device`.
  [[nodiscard]] AllocationRef resolveOn(DeviceState& device, const void* ptr,
                                        std::size_t bytes, std::string_view what);

  // The queue of `stream`. Throws InvalidArgument for another type, a bad
  // index or an unknown id.
  [[nodiscard]] StreamQueue& queue(Stream stream, std::string_view what);
  // The calling thread's current stream queue of device `index`.
  [[nodiscard]] StreamQueue& currentQueue(DeviceIndex index, std::string_view what);
  [[nodiscard]] Stream newStream(DeviceIndex index, int priority);

  void failNthAllocation(std::uint64_t nth) noexcept;
  // Device `index` is lost after `operations` more operations. Throws as
  // device() does.
  void loseDeviceAfter(DeviceIndex index, std::uint64_t operations);
  void clearFaults() noexcept;
  // Sets each device allocator's diverted flag from the conditions that
  // need Runtime::allocate's checks; called after any of them may have
  // changed (never needed when one only ends: the flag then stays set until
  // the next call). A no-op in a fork child, whose flags the fork callback
  // set for good. Never throws.
  void refreshDiversion() noexcept;
  // Diverts every device allocator for good (the fork child's callback).
  void divertEveryDevice() noexcept;

  // Device memory of every device (only after init()): the core caching
  // allocator over the devices' address ranges.
  [[nodiscard]] memory::CachingAllocator& cachingAllocator() const noexcept {
    return *caching_allocator_;
  }

  [[nodiscard]] Events& events() noexcept { return events_; }
  [[nodiscard]] Graphs& graphs() noexcept { return graphs_; }

 private:
  Runtime();
  // True (once) when the pending injected allocation failure is this one.
  bool consumeInjectedAllocationFailure() noexcept;

  std::mutex init_mutex_;
  // Serialises refreshDiversion: the last call reads every condition
  // written before it began.
  std::mutex diversion_mutex_;
  AllocationChecks allocation_checks_{*this};
  std::atomic<bool> initialized_{false};
  std::once_flag probe_once_;
  int probe_device_count_ = 0;
  Config config_;
  kit::ThreadCurrent current_;
  kit::AddressMap addresses_;
  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::unique_ptr<DeviceSegments> segments_;
  std::unique_ptr<memory::CachingAllocator> caching_allocator_;
  std::atomic<std::uint64_t> fail_allocation_countdown_{0};  // 0: none pending
  Events events_;
  Graphs graphs_;
};

// The thread's current openreg device (0 until set) and current stream id per
// device (0, the default stream, until set). Never throw.
[[nodiscard]] inline DeviceIndex threadCurrentDevice() noexcept {
  return Runtime::instance().current().device();
}
[[nodiscard]] inline StreamId currentStreamId(DeviceIndex index) noexcept {
  return Runtime::instance().current().stream(index);
}

// The initialised runtime, initialising it if needed (openreg's own init, not
// the context's: no plugin autoload, no registration). Throws what init
// throws, and DeviceError in a fork child. `what` names the caller.
Runtime& readyRuntime(std::string_view what);

}  // namespace accel::openreg::detail
