// Typed results and options of the memory hook groups: statistics, history
// recording, snapshots and out-of-memory observers.
//
// A Stat tracks one quantity (bytes or a count) as current value, peak since
// the last reset, and cumulative amounts added and removed. MemoryStats is what
// memoryStats(device) returns. MemorySnapshot is the state of a caching
// allocator's segments plus the recorded history; its JSON form is documented
// in docs/memory.md.
//
// Thread-safety: plain value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "accel/device.h"
#include "accel/stream.h"

namespace accel {

struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;  // cumulative increases
  std::int64_t freed = 0;      // cumulative decreases
};

struct MemoryStats {
  Stat allocated_bytes;  // bytes handed to callers
  Stat reserved_bytes;   // bytes obtained from the device (>= allocated with caching)
  Stat active_bytes;     // allocated, or freed but still in use by a stream
  Stat requested_bytes;  // bytes callers asked for, before rounding
  Stat allocations;      // live allocation count
  Stat segments;         // device allocations (cudaMalloc-level calls)
  std::int64_t num_alloc_retries = 0;  // allocations that freed cache and retried
  std::int64_t num_ooms = 0;           // OutOfMemory errors raised
  std::int64_t num_device_alloc = 0;
  std::int64_t num_device_free = 0;
};

enum class HistoryRecording : std::uint8_t { Off, AllocationsOnly, All };

struct MemoryHistoryOptions {
  HistoryRecording enabled = HistoryRecording::All;
  std::size_t max_entries = 100000;  // oldest entries are dropped beyond this
  bool record_stack = false;         // capture a host call stack per event
};

struct MemoryBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t requested_size = 0;
  enum class State : std::uint8_t {
    Free,
    Allocated,
    ActivePendingFree
  } state = State::Free;
};

struct MemorySegment {
  Device device;
  std::uint64_t address = 0;
  std::uint64_t total_size = 0;
  std::uint64_t allocated_size = 0;
  Stream stream;
  bool is_large = true;
  std::vector<MemoryBlock> blocks;
};

struct MemoryTraceEntry {
  enum class Action : std::uint8_t {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    Snapshot,
    Oom
  } action = Action::Alloc;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  Stream stream;
  std::int64_t time_ns = 0;  // steady-clock time of the event
  std::vector<std::string> frames;
};

struct MemorySnapshotOptions {
  DeviceIndex device = kCurrentDevice;  // -1: current device
  bool all_devices = false;
  bool include_trace = true;
};

struct MemorySnapshot {
  std::vector<MemorySegment> segments;
  std::vector<std::vector<MemoryTraceEntry>> device_traces;  // one list per device
};

struct OutOfMemoryEvent {
  DeviceIndex device = 0;
  std::size_t requested_bytes = 0;
  std::size_t device_total_bytes = 0;
  std::size_t device_free_bytes = 0;
};

// Called on the thread that hit the OutOfMemory, before the error is thrown.
// Must not throw; must not allocate on the same device.
using OutOfMemoryObserver = std::function<void(const OutOfMemoryEvent&)>;

}  // namespace accel
