// Typed results and options of the memory hook groups: statistics, history
// recording, snapshots and out-of-memory observers.
//
// A Stat tracks one quantity (bytes or a count) as current value, peak since
// the last reset, and cumulative amounts added and removed. A PooledStat is a
// Stat for all pools (its own fields) plus the same for the small and the
// large pool. MemoryStats is what memoryStats(device) returns; flatten() gives
// the flat names PyTorch's memory_stats() uses ("allocated_bytes.all.peak").
// MemorySnapshot is the state of a caching allocator's segments plus the
// recorded history; memorySnapshotToJson (accel/memory/snapshot_json.h) writes
// it with the keys of PyTorch's snapshot dictionary (docs/memory.md).
//
// Thread-safety: plain value types; flatten() is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accel/device.h"
#include "accel/export.h"
#include "accel/graph.h"
#include "accel/stream.h"

namespace accel {

struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;  // cumulative increases
  std::int64_t freed = 0;      // cumulative decreases

  // Adds delta (negative: subtracts), keeping peak and the cumulative sums.
  void add(std::int64_t delta) noexcept {
    current += delta;
    if (delta >= 0) {
      allocated += delta;
      if (current > peak) peak = current;
    } else {
      freed -= delta;
    }
  }
  // add() for an amount whose sign the caller knows (amount >= 0): the same
  // effect without the branch on the sign.
  void increase(std::int64_t amount) noexcept {
    current += amount;
    allocated += amount;
    peak = current > peak ? current : peak;
  }
  void decrease(std::int64_t amount) noexcept {
    current -= amount;
    freed += amount;
  }
  void resetPeak() noexcept { peak = current; }
  // Starts the cumulative sums again from 0 (current and peak stay): from
  // then on allocated - freed is the change since the reset.
  void resetAccumulated() noexcept {
    allocated = 0;
    freed = 0;
  }
  friend bool operator==(const Stat&, const Stat&) = default;
};

// The Stat fields themselves are the "all" figure, so code that reads
// stats.allocated_bytes.current keeps working; small_pool/large_pool split it
// by the pool the block came from (requests of at most 1 MiB are small).
struct PooledStat : Stat {
  Stat small_pool;
  Stat large_pool;

  void add(bool small, std::int64_t delta) noexcept {
    Stat::add(delta);
    (small ? small_pool : large_pool).add(delta);
  }
  void increase(bool small, std::int64_t amount) noexcept {
    Stat::increase(amount);
    (small ? small_pool : large_pool).increase(amount);
  }
  void decrease(bool small, std::int64_t amount) noexcept {
    Stat::decrease(amount);
    (small ? small_pool : large_pool).decrease(amount);
  }
  void resetPeak() noexcept {
    Stat::resetPeak();
    small_pool.resetPeak();
    large_pool.resetPeak();
  }
  void resetAccumulated() noexcept {
    Stat::resetAccumulated();
    small_pool.resetAccumulated();
    large_pool.resetAccumulated();
  }
  friend bool operator==(const PooledStat&, const PooledStat&) = default;
};

struct ACCEL_API MemoryStats {
  PooledStat allocated_bytes;          // bytes handed to callers (rounded sizes)
  PooledStat reserved_bytes;           // bytes obtained from the device
  PooledStat active_bytes;             // allocated, or freed but still used by a stream
  PooledStat inactive_split_bytes;     // free bytes inside split segments
  PooledStat requested_bytes;          // bytes callers asked for, before rounding
  PooledStat allocations;              // live allocation count ("allocation")
  PooledStat segments;                 // device segments ("segment")
  PooledStat active;                   // active block count
  PooledStat inactive_split;           // free blocks inside split segments
  Stat oversize_allocations;           // allocations above max_split_size
  Stat oversize_segments;              // segments above max_split_size
  std::int64_t num_alloc_retries = 0;  // allocations that freed cache and retried
  std::int64_t num_ooms = 0;           // OutOfMemory errors raised
  std::int64_t num_device_alloc = 0;   // raw segment allocations (and page maps)
  std::int64_t num_device_free = 0;    // raw segment frees (and page unmaps)
  std::int64_t num_sync_all_streams = 0;  // waits for all pending frees
  std::int64_t max_split_size = 0;        // setting in force (0: unlimited)

  // Every figure under PyTorch's flat name: "<stat>.<all|small_pool|large_pool>.
  // <current|peak|allocated|freed>", "oversize_allocations.<field>", and the
  // plain counters. The names are written once, in memory_stats.cpp.
  [[nodiscard]] std::map<std::string, std::int64_t> flatten() const;
  // The same figures without building names, for readers that cache them
  // (the Python binding): flatValues()[i] is the figure called flatNames()[i].
  [[nodiscard]] static const std::vector<std::string>& flatNames();
  void flatValues(std::vector<std::int64_t>& out) const;
  // Sets every peak to its current value.
  void resetPeaks() noexcept;
  // Sets every cumulative sum (each Stat's allocated and freed) and the
  // event counters (num_alloc_retries, num_ooms, num_sync_all_streams,
  // num_device_alloc, num_device_free) to 0; current values, peaks and
  // max_split_size stay. PyTorch's reset_accumulated_memory_stats.
  void resetAccumulated() noexcept;
  friend bool operator==(const MemoryStats&, const MemoryStats&) = default;
};

// What getMemoryInfo(device) answers: the device's capacity and how much of
// it is free now, in bytes, as the device (or, where it cannot tell, the
// backend's own accounting) sees it. Memory the caching allocator keeps
// cached counts as used, as with cudaMemGetInfo. total_bytes 0 means unknown.
struct DeviceMemoryInfo {
  std::size_t total_bytes = 0;
  std::size_t free_bytes = 0;
  friend bool operator==(const DeviceMemoryInfo&, const DeviceMemoryInfo&) = default;
};

// Off: nothing recorded. State: live blocks keep the stack of their
// allocation (for snapshots) but no event trace is kept. AllocationsOnly: the
// trace keeps alloc and free events only. All: every event, segments included.
enum class HistoryRecording : std::uint8_t { Off, AllocationsOnly, All, State };

// One frame of a host call stack, symbolised when the snapshot is taken.
struct MemoryFrame {
  std::string name;      // demangled function name, or the address in hex
  std::string filename;  // the shared object holding it
  int line = 0;          // 0: unknown (no debug-line lookup is done)
  friend bool operator==(const MemoryFrame&, const MemoryFrame&) = default;
};

// The call stack of a language hosting the program (Python's frames, say),
// captured cheaply at an allocation and resolved to frames only when a
// snapshot is taken: an embedding keeps what it needs to name the frames
// later (PyTorch's CapturedTraceback keeps code objects and instruction
// offsets). Resolved frames come before the C++ ones, innermost first.
// frames() is called without any allocator lock held, may take the host's
// own lock (the GIL), and must not throw; the destructor may run under the
// allocator's lock, so it must not take a lock a caller of the allocator
// could hold while allocating.
class HostStack {
 public:
  virtual ~HostStack() = default;
  [[nodiscard]] virtual std::vector<MemoryFrame> frames() const = 0;
};

// Captures the calling thread's host stack (null when it has none). Called
// on the allocating thread before the allocator's device lock is taken; must
// not throw.
using HostStackCapture = std::function<std::shared_ptr<const HostStack>()>;

struct MemoryHistoryOptions {
  HistoryRecording enabled = HistoryRecording::All;
  std::size_t max_entries = 100000;  // oldest entries are dropped beyond this
  bool record_stack = false;         // capture a host call stack per event
  // With one, allocations also keep the host language's stack (before the
  // C++ frames when record_stack is on too). None by default; the
  // initialiser lets `{HistoryRecording::Off}` and the like name only the
  // leading members without a -Wmissing-field-initializers warning.
  HostStackCapture capture_host_stack{};
};

struct MemoryBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t requested_size = 0;
  enum class State : std::uint8_t {
    Free,              // "inactive"
    Allocated,         // "active_allocated"
    ActivePendingFree  // "active_pending_free": freed, a stream still uses it
  } state = State::Free;
  std::vector<MemoryFrame> frames;  // allocation stack when recorded
  // The host stack not yet resolved into `frames`; CachingAllocator::snapshot
  // resolves it before returning, so callers see it null.
  std::shared_ptr<const HostStack> host_stack;
};

struct MemorySegment {
  Device device;
  std::uint64_t address = 0;
  std::uint64_t total_size = 0;
  std::uint64_t allocated_size = 0;
  Stream stream;
  bool is_large = true;
  std::vector<MemoryBlock> blocks;
  std::uint64_t active_size = 0;
  std::uint64_t requested_size = 0;
  MempoolId pool;  // default pool: {0, 0}
  bool is_expandable = false;
};

struct MemoryTraceEntry {
  // A new value goes last and is named in src/core/memory/snapshot_json.cpp's
  // table.
  enum class Action : std::uint8_t {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    Snapshot,
    Oom,
    SegmentMap,
    SegmentUnmap
  } action = Action::Alloc;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  Stream stream;
  std::int64_t time_ns = 0;         // steady-clock time of the event
  std::vector<std::string> frames;  // "name (file)" per frame, innermost first
  std::vector<MemoryFrame> frame_details;
  std::shared_ptr<const HostStack> host_stack;  // as MemoryBlock::host_stack
  std::uint64_t device_free = 0;                // for Oom: bytes the device reported free
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
  std::size_t allocated_bytes = 0;  // live allocations on the device
  std::size_t reserved_bytes = 0;   // held by the cache, allocated or not
  std::size_t reserved_unallocated_bytes = 0;
  std::size_t private_pool_bytes = 0;  // reserved by graph/private pools
  std::size_t largest_free_block = 0;  // largest cached free block
  double fragmentation = 0.0;          // 1 - largest free block / all cached free bytes
  Stream stream;
};

// Called on the thread that hit the OutOfMemory, before the error is thrown,
// without the allocator's lock held. Must not throw (a throw is swallowed);
// may free memory on the device, but not allocate there.
using OutOfMemoryObserver = std::function<void(const OutOfMemoryEvent&)>;

}  // namespace accel
