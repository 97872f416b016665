// DeviceTable: openreg's simulated devices — each device's memory,
// execution units, fault state and stream queues (their workers start on
// first use) — and the checks the core's allocator asks openreg for before
// an allocation on a device openreg diverted.
//
// open() builds the devices once, at the backend's init: it reserves one
// PROT_NONE address range for all devices (device i owns [base + i * stride,
// base + i * stride + capacity × kAddressSpanFactor)), so that the device of
// any pointer is one subtraction and one division away.
//
// Streams: id 0 is a device's default stream; ids 1.. form the pool that
// getNewStream hands out round-robin, kPoolStreamsPerPriority per priority
// level. The current device and streams are the core's (openreg does not
// keep them): currentQueue reads them through the core's services.
//
// What the table is given, and all it uses: the core's services
// (adapter::Core: the use of a block an operation names, the calling
// thread's current stream, the diversion of a device's allocations), and the
// backend's ForkState (a fork child is refused, not left waiting for workers
// that did not survive the fork).
//
// Thread-safety: all members are thread-safe. open() runs under the
// backend's init lock; every other member reads what it built only after
// initialized() (acquire), or is asked by the core after the init it ran.
// Lifetime: a part of the backend, which the adapter never destroys once
// registered, so detached workers and static destructors that free device
// memory can always reach it.
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
#include "fork_state.h"
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

// The lookups are const: they do not change the table (which devices
// exist, where their memory lies). What they hand out, a device's state and
// queues, is the device's, thread-safe on its own, so a part that only looks
// devices up (Events, Graphs, Copies) holds a const DeviceTable& and cannot
// open the table or inject faults.
class DeviceTable {
 public:
  // `core` and `fork` must outlive the table (the backend owns all three;
  // `core` is linked by the time open() runs).
  DeviceTable(const adapter::Core& core, const ForkState& fork) noexcept
      : core_(core), fork_(fork) {}
  DeviceTable(const DeviceTable&) = delete;
  DeviceTable& operator=(const DeviceTable&) = delete;

  // Builds the devices `config` describes and arms its injected faults.
  // Throws NotAvailable when the address range cannot be reserved (nothing
  // is built; a later open() may retry). Once only, under the caller's lock.
  void open(const Config& config);
  // True once open() succeeded. Never throws.
  [[nodiscard]] bool initialized() const noexcept {
    return initialized_.load(std::memory_order_acquire);
  }
  // Only after open().
  [[nodiscard]] int count() const noexcept { return static_cast<int>(devices_.size()); }

  // Device `index` (checked), marked active. Throws InvalidArgument for a bad
  // index, DeviceError in a fork child.
  [[nodiscard]] DeviceState& device(DeviceIndex index, std::string_view what) const;
  // True once device `index` was used. Never throws.
  [[nodiscard]] bool isActive(DeviceIndex index) const noexcept;
  // The device whose range holds ptr. Never throws.
  [[nodiscard]] std::optional<DeviceIndex> deviceOfAddress(
      const void* ptr) const noexcept;
  // The raw memory of device `index` for the core's caches (DeviceSegments);
  // null before open() or past the devices. Never throws, marks nothing.
  [[nodiscard]] DeviceMemory* memory(DeviceIndex index) const noexcept;

  // The live allocation holding [ptr, ptr + bytes), which must be on `device`.
  [[nodiscard]] AllocationRef resolveOn(DeviceState& device, const void* ptr,
                                        std::size_t bytes, std::string_view what) const;
  // The queue of `stream` (an openreg stream: the core or the API checked
  // the type). Throws InvalidArgument for a bad index or an unknown id.
  [[nodiscard]] StreamQueue& queue(Stream stream, std::string_view what) const;
  // The calling thread's current stream queue of device `index`, as the
  // core keeps it.
  [[nodiscard]] StreamQueue& currentQueue(DeviceIndex index, std::string_view what) const;
  // The next pool stream of `priority` (round-robin). Throws as device().
  [[nodiscard]] StreamId newStream(DeviceIndex index, int priority) const;

  // ---- the allocation checks and fault injection ----

  // The checks before an allocation on device `index` while it is diverted
  // (refreshDiversion): the device used (active), not lost, no injected
  // failure pending. Throws DeviceError or OutOfMemory (the core then takes
  // its out-of-memory path) to refuse it.
  void checkAllocation(DeviceIndex index, std::size_t bytes);
  void failNthAllocation(std::uint64_t nth);
  // Device `index` is lost after `operations` more operations. Throws as
  // device() does.
  void loseDeviceAfter(DeviceIndex index, std::uint64_t operations);
  void clearFaults();

 private:
  // Asks the core to divert each device's allocations to checkAllocation
  // while any condition that needs its checks holds (the device unused,
  // lost or set to be lost, an allocation failure armed); called after any
  // of them may have changed. Never throws (a core that cannot divert
  // leaves the checks to the next change).
  void refreshDiversion() const noexcept;
  // True while failNthAllocation has an allocation to fail. Never throws.
  [[nodiscard]] bool allocationFaultArmed() const noexcept {
    return fail_allocation_countdown_.load(std::memory_order_relaxed) != 0;
  }
  // True (once) when the pending injected allocation failure is this one.
  bool consumeInjectedAllocationFailure() noexcept;

  const adapter::Core& core_;
  const ForkState& fork_;
  // Serialises refreshDiversion: the last call reads every condition
  // written before it began.
  mutable std::mutex diversion_mutex_;
  std::atomic<bool> initialized_{false};
  std::byte* base_ = nullptr;  // device i's range starts at base_ + i * stride_
  std::size_t stride_ = 0;
  std::size_t span_ = 0;  // the part of a stride a device's memory may use
  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::atomic<std::uint64_t> fail_allocation_countdown_{0};  // 0: none pending
};

}  // namespace accel::openreg::detail
