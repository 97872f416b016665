// Runtime: the simulated devices of openreg, shared by its backend (the
// hooks the core calls through the plugin boundary) and its own API
// (extension.h).
//
// init() reads the configuration, reserves one PROT_NONE address range for
// all devices (device i owns [base + i * stride, base + i * stride + capacity)),
// so that the device of any pointer is one subtraction and one division
// away, and builds each device's memory, execution units, fault state and
// stream queues (their workers start on first use).
//
// Streams: id 0 is a device's default stream; ids 1.. form the pool that
// getNewStream hands out round-robin, kPoolStreamsPerPriority per priority
// level. The current device and streams are the core's (the backend does not
// keep them): the runtime reads them through the core's services where it
// needs them (a synchronous copy, a capture, a replay).
//
// The runtime talks to the core only through the adapter's Core (attach()),
// which the plugin's registration hands it: the caching allocator, pinned
// cache and generators are the core's.
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

#include "accel/adapter/core.h"
#include "accel/openreg/config.h"
#include "device_faults.h"
#include "device_memory.h"
#include "events.h"
#include "graphs.h"
#include "pinned_memory.h"
#include "stream_queue.h"
#include "types.h"
#include "unit_scheduler.h"

namespace accel::openreg::detail {

inline constexpr int kLowestPriority = 0;
inline constexpr int kGreatestPriority = 2;
inline constexpr int kPriorityLevels = kGreatestPriority - kLowestPriority + 1;
inline constexpr int kPoolStreamsPerPriority = 4;
inline constexpr int kStreamsPerDevice = 1 + kPriorityLevels * kPoolStreamsPerPriority;

struct DeviceState {
  DeviceState(DeviceIndex index, std::byte* base, std::size_t capacity,
              std::size_t page_size, const Config& config);

  const DeviceIndex index;
  DeviceMemory memory;
  UnitScheduler units;
  DeviceFaults faults;
  std::vector<std::unique_ptr<StreamQueue>> streams;  // index = StreamId
  std::array<std::atomic<unsigned>, kPriorityLevels> next_pool_stream{};
  std::atomic<bool> active{false};  // hasPrimaryContext
};

class Runtime {
 public:
  static Runtime& instance() noexcept;

  // The core the plugin registered with; set once, before anything else
  // asks for it.
  void attach(const adapter::Core& core) noexcept { core_ = core; }
  [[nodiscard]] const adapter::Core& core() const noexcept { return core_; }

  // Device count from the configuration, without initialising; 0 when the
  // environment is malformed. Never throws.
  [[nodiscard]] int probeDeviceCount() noexcept;
  // Initialises the devices once; throws InvalidArgument for a malformed
  // environment, NotAvailable when the address range cannot be reserved or
  // the plugin is not registered with a core. A failed init can be retried.
  void init();
  [[nodiscard]] bool initialized() const noexcept {
    return initialized_.load(std::memory_order_acquire);
  }
  // Only after init().
  [[nodiscard]] const Config& config() const noexcept { return config_; }
  [[nodiscard]] int deviceCount() const noexcept {
    return static_cast<int>(devices_.size());
  }

  // Device `index` (checked), marked active. Throws InvalidArgument for a bad
  // index, DeviceError in a fork child.
  [[nodiscard]] DeviceState& device(DeviceIndex index, std::string_view what);
  // True while failNthAllocation has an allocation to fail. Never throws.
  [[nodiscard]] bool allocationFaultArmed() const noexcept {
    return fail_allocation_countdown_.load(std::memory_order_relaxed) != 0;
  }

  // True once device `index` was used. Never throws.
  [[nodiscard]] bool isActive(DeviceIndex index) const noexcept;
  // The device whose range holds ptr. Never throws.
  [[nodiscard]] std::optional<DeviceIndex> deviceOfAddress(
      const void* ptr) const noexcept;

  // The checks before an allocation on device `index` while it is diverted
  // (refreshDiversion): the device used (active), not lost, no injected
  // failure pending. Throws DeviceError or OutOfMemory (the core then takes
  // its out-of-memory path) to refuse it.
  void checkAllocation(DeviceIndex index, std::size_t bytes);
  // The live allocation holding [ptr, ptr + bytes), which must be on `device`.
  [[nodiscard]] AllocationRef resolveOn(DeviceState& device, const void* ptr,
                                        std::size_t bytes, std::string_view what);

  // The queue of `stream` (an openreg stream: the core or the API checked
  // the type). Throws InvalidArgument for a bad index or an unknown id.
  [[nodiscard]] StreamQueue& queue(Stream stream, std::string_view what);
  // The calling thread's current stream queue of device `index`, as the
  // core keeps it.
  [[nodiscard]] StreamQueue& currentQueue(DeviceIndex index, std::string_view what);
  [[nodiscard]] StreamId newStream(DeviceIndex index, int priority);

  void failNthAllocation(std::uint64_t nth);
  // Device `index` is lost after `operations` more operations. Throws as
  // device() does.
  void loseDeviceAfter(DeviceIndex index, std::uint64_t operations);
  void clearFaults();
  // Asks the core to divert each device's allocations to checkAllocation
  // while any condition that needs its checks holds (the device unused,
  // lost or set to be lost, an allocation failure armed); called after any
  // of them may have changed. Never throws (a core that cannot divert
  // leaves the checks to the next change).
  void refreshDiversion() noexcept;

  [[nodiscard]] DeviceSegments& segments() noexcept { return segments_; }
  [[nodiscard]] PinnedPages& pinned() noexcept { return pinned_; }
  [[nodiscard]] Events& events() noexcept { return events_; }
  [[nodiscard]] Graphs& graphs() noexcept { return graphs_; }

 private:
  Runtime();
  // True (once) when the pending injected allocation failure is this one.
  bool consumeInjectedAllocationFailure() noexcept;

  adapter::Core core_;
  std::mutex init_mutex_;
  // Serialises refreshDiversion: the last call reads every condition
  // written before it began.
  std::mutex diversion_mutex_;
  std::atomic<bool> initialized_{false};
  std::once_flag probe_once_;
  int probe_device_count_ = 0;
  Config config_;
  std::byte* base_ = nullptr;  // device i's range starts at base_ + i * stride_
  std::size_t stride_ = 0;
  std::size_t span_ = 0;  // the part of a stride a device's memory may use
  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::atomic<std::uint64_t> fail_allocation_countdown_{0};  // 0: none pending
  Events events_;
  Graphs graphs_;
  DeviceSegments segments_;
  PinnedPages pinned_;
};

// The initialised runtime, initialising it if needed. Throws what init
// throws, and DeviceError in a fork child. `what` names the caller.
Runtime& readyRuntime(std::string_view what);

}  // namespace accel::openreg::detail
