// CachingAllocator: the one caching device allocator of accelhooks, generic
// over a backend's raw segment allocate/free (segment_source.h).
//
// Use it from a backend: construct one per device type over the backend's
// SegmentSource, hand out its DataPtrs from the device allocator hook, and
// answer the memory and memory_history hook groups by forwarding to it
// (memory_hooks.h does that in one line). Device allocation is slow, so freed
// blocks are cached and reused: sizes are rounded (size_rules.h), requests of
// at most 1 MiB share 2 MiB segments (the small pool), larger ones use 20 MiB
// or their own segments (the large pool), the best-fitting free block of the
// same stream is reused and split when the rest is worth keeping, and free
// neighbours merge again (a freed block is first held for the next request
// of its exact size on its stream, and merged before anything else looks).
// A block used on other streams (recordStream) is
// reused only once those streams' work on it has completed (events); a free
// segment cached for one stream is handed to another by making the new stream
// wait on the old one's event rather than left stranded. When memory runs out
// the cache is freed (oversize blocks first, then everything) and the
// allocation retried; then OutOfMemory observers are told, and OutOfMemory is
// thrown with the figures that explain it. docs/memory.md has the rules.
//
// Thread-safety: every member function is thread-safe; each device has its
// own lock, so devices do not contend. The lock is biased to the thread that
// takes it most (that thread takes it with no locked instruction; another
// thread withdraws the bias with one system call), see docs/memory.md.
// OutOfMemory observers run on the allocating thread without any allocator
// lock held.
// Lifetime: outlives every DataPtr it handed out (backends keep theirs for
// the process lifetime); the SegmentSource must outlive it.
// fork(): the core's fork handlers hold every live allocator's devices
// across it (their locks, biases and thread caches), so a child finds them
// consistent whatever its parent's other threads were doing. In the child,
// memory from segments made before the fork is the parent's: a free of such
// a block leaks it (counted freed, active for good), its cached memory is
// neither handed out again nor given back (emptyCache skips it), and new
// requests get new segments; no backend needs fork logic for that
// (docs/lifecycle.md, "fork()"). A SegmentSource must not call into another
// CachingAllocator (the fork handlers take the devices' locks in one order).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "accel/allocator.h"
#include "accel/device.h"
#include "accel/export.h"
#include "accel/graph.h"
#include "accel/memory/allocator_settings.h"
#include "accel/memory/segment_source.h"
#include "accel/memory_stats.h"
#include "accel/stream.h"

namespace accel::memory {

namespace detail {
class DeviceCache;
class DeviceCacheHandle;
}  // namespace detail

// What the allocator knows about one block it handed out.
struct BlockInfo {
  void* base = nullptr;       // the block's first byte: the DataPtr's pointer
  std::size_t size = 0;       // the block's bytes (the request rounded, or more)
  std::size_t requested = 0;  // the bytes the caller asked for
  Stream stream;              // the stream it was allocated on
  bool freed = false;         // its DataPtr is gone; a BlockUse keeps it
};

// A counted use of a block a CachingAllocator handed out, for a backend whose
// queued, running or captured work names memory its user may free meanwhile.
// While any use of a block lives, destroying the block's DataPtr does not
// return it to the cache: the free is done when the last use ends, and until
// then the block counts as allocated (the statistics, snapshots and history
// see the free then). Copying a use counts another; an empty use (the
// default, or a moved-from one) holds nothing.
//
// Thread-safety: distinct BlockUses may be copied and destroyed from any
// threads at once (each takes its block's device lock); one BlockUse is not
// shared. Lifetime: must not outlive its CachingAllocator.
class ACCEL_API BlockUse {
 public:
  BlockUse() noexcept = default;
  BlockUse(const BlockUse& other) noexcept;
  BlockUse(BlockUse&& other) noexcept;
  BlockUse& operator=(BlockUse other) noexcept;
  ~BlockUse();

  explicit operator bool() const noexcept { return block_ != nullptr; }
  // The block's facts as the use began (they do not change while it lives).
  [[nodiscard]] const BlockInfo& info() const noexcept { return info_; }

 private:
  friend class CachingAllocator;
  void* block_ = nullptr;  // a detail::Block
  BlockInfo info_;
};

class ACCEL_API CachingAllocator {
 public:
  // Caches memory of devices [0, device_count) of `type` drawn from `source`.
  // Throws InvalidArgument for device_count outside [1, kMaxDevicesPerType].
  CachingAllocator(DeviceType type, int device_count, SegmentSource& source,
                   AllocatorSettings settings = {});
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // At least `bytes` on device `index` for use on `stream` (a stream of that
  // device). 0 bytes give an empty DataPtr. Destroying the DataPtr returns the
  // block to the cache. Throws OutOfMemory (after freeing cache and retrying,
  // and after the observers ran), InvalidArgument for a bad index or stream,
  // DeviceError from the source.
  [[nodiscard]] DataPtr allocate(DeviceIndex index, std::size_t bytes, Stream stream);
  // Fault injection for simulated backends: runs the out-of-memory path of a
  // request of `bytes` on `stream` as if the device refused it and every
  // retry — the cache is freed (oversize blocks, then all), num_alloc_retries
  // and num_ooms are counted, an oom event is recorded, the observers are
  // called — and throws that OutOfMemory. Throws InvalidArgument for a bad
  // index or stream.
  [[noreturn]] void failAsOutOfMemory(DeviceIndex index, std::size_t bytes,
                                      Stream stream);
  // Marks the block behind `data` (from this allocator) as used by `stream`:
  // when freed, it is reused only after that stream's work so far completed.
  // Throws InvalidArgument for a DataPtr this allocator did not hand out.
  void recordStream(const DataPtr& data, Stream stream);
  // True if `data` came from this allocator. Never throws.
  [[nodiscard]] bool owns(const DataPtr& data) const noexcept;
  // The deleter of every DataPtr this class hands out. A backend that wraps
  // it calls it with the DataPtr's
  // context. Never throws.
  [[nodiscard]] static DeleterFn blockDeleter() noexcept;
  // The allocator that handed out `data` (any backend's, the core's caches
  // behind a plugin included), or null for memory no CachingAllocator
  // handed out. Thread-safe (reads only the block the DataPtr holds); never
  // throws.
  [[nodiscard]] static CachingAllocator* owning(const DataPtr& data) noexcept;

  // ---- lookups: what a backend's checks read instead of keeping a record
  // of every allocation (each costs a search of the device's segments, then
  // of one segment's blocks; nothing is paid per allocation) ----
  // The device whose segments (cached or in use) hold `ptr`; nullopt for a
  // pointer into no segment of this allocator. Thread-safe (takes each
  // device's lock in turn); never throws.
  [[nodiscard]] std::optional<DeviceIndex> deviceOf(const void* ptr) const noexcept;
  // The block of device `index` that holds `ptr` and is handed out (or freed
  // but kept by a BlockUse, then `freed` is set); nullopt when `ptr` is in a
  // cached block or in no segment of the device. Interior pointers count.
  // Thread-safe; throws InvalidArgument for a bad index.
  [[nodiscard]] std::optional<BlockInfo> findBlock(DeviceIndex index,
                                                   const void* ptr) const;
  // A use of the handed-out block of device `index` that holds `ptr` (see
  // BlockUse); an empty use when there is none or its DataPtr is gone
  // (findBlock tells which). Thread-safe; throws InvalidArgument for a bad
  // index.
  [[nodiscard]] BlockUse useBlock(DeviceIndex index, const void* ptr);

  // Settings apply to later allocations. Expandable segments asked of a
  // source without page mapping are ignored (said once on stderr), here and
  // in the constructor: settings() then reports them off. Thread-safe;
  // throws nothing.
  void setSettings(const AllocatorSettings& settings);
  [[nodiscard]] AllocatorSettings settings() const;
  // Caps what device `index` may reserve: a byte count (0: no cap) or a
  // fraction of the source's reported capacity (0: nothing may be reserved;
  // 1: the capacity). Past the cap, allocations take the out-of-memory path.
  // Throws InvalidArgument for a fraction outside [0, 1] (NaN included) or
  // when the capacity is unknown, and for a bad index.
  void setMemoryLimit(DeviceIndex index, std::size_t bytes);
  void setMemoryFraction(DeviceIndex index, double fraction);
  // The source's capacity and free bytes of device `index` (total_bytes 0:
  // the source cannot tell). Throws InvalidArgument for a bad index.
  [[nodiscard]] DeviceMemoryInfo memoryInfo(DeviceIndex index) const;

  // ---- private pools (graph capture) ----
  // A new pool id, never returned before by this allocator.
  [[nodiscard]] MempoolId createPool();
  // Counts a user of `pool` (created on first use); a pool lives while it
  // has users, and when the last one releases it its cached memory is
  // returned (segments still in use go back once their blocks are freed).
  void retainPool(DeviceIndex index, MempoolId pool);
  void releasePool(DeviceIndex index, MempoolId pool);
  // Until endAllocateToPool with the same stream, allocations on `stream`
  // come from `pool` (which must be retained). Several streams may allocate
  // to one pool at once (concurrent captures sharing it). Throws
  // InvalidArgument for an unknown pool or a stream of another device.
  void beginAllocateToPool(DeviceIndex index, MempoolId pool, Stream stream);
  // Allocations on `stream` come from the default pools again; other streams
  // allocating to `pool` go on doing so. Never throws for a stream that was
  // not allocating to `pool` (nothing to end); InvalidArgument for a bad index.
  void endAllocateToPool(DeviceIndex index, MempoolId pool, Stream stream);

  // ---- the memory and memory_history hook groups ----
  [[nodiscard]] MemoryStats stats(DeviceIndex index) const;
  void resetPeakStats(DeviceIndex index);
  // MemoryStats::resetAccumulated for device `index`.
  void resetAccumulatedStats(DeviceIndex index);
  // Returns every unused cached segment to the device (waiting for pending
  // frees first), on all devices.
  void emptyCache();
  // Applies to all devices. Turning recording off drops the recorded trace.
  void recordHistory(const MemoryHistoryOptions& options);
  [[nodiscard]] MemorySnapshot snapshot(const MemorySnapshotOptions& options) const;
  void attachOutOfMemoryObserver(OutOfMemoryObserver observer);

  [[nodiscard]] DeviceType deviceType() const noexcept { return type_; }
  [[nodiscard]] int deviceCount() const noexcept {
    return static_cast<int>(devices_.size());
  }
  [[nodiscard]] SegmentSource& source() const noexcept { return source_; }

 private:
  friend class detail::DeviceCache;
  // The handle on one device that the kit's Allocator allocates through
  // (device_cache_handle.h): it reads device() and nothing else.
  friend class detail::DeviceCacheHandle;
  detail::DeviceCache& device(DeviceIndex index) const;
  [[noreturn]] void throwBadDevice(DeviceIndex index) const;
  [[noreturn]] static void throwForeignStream(Stream stream, Device where);

  const DeviceType type_;
  SegmentSource& source_;
  std::vector<std::unique_ptr<detail::DeviceCache>> devices_;
  struct Shared;
  std::unique_ptr<Shared> shared_;
};

}  // namespace accel::memory
