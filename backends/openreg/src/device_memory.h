// DeviceMemory: the memory of one simulated device — its address range, the
// raw segments and pages the core caching allocator draws from it, and the
// host access that operations open on the blocks they name.
//
// Allocation is the core's: its caching allocator draws segments and pages
// from openreg across the C plugin boundary (accel/plugin_abi.h) through
// DeviceSegments below, an adapter::Memory, so the rounding, pools,
// stream-aware reuse, private pools of graphs, expandable segments, OOM path,
// stats, history and snapshots are the core's, and an allocate+free pair
// costs what the core's does. openreg keeps no record of its own per
// allocation: the checks on copies and kernels (use after free, bounds) ask
// the core for a use of the block (Core::useBlock).
//
// The device owns a slice of an address range that openreg reserves at
// start-up with PROT_NONE. The slice spans kAddressSpanFactor × the device's
// capacity, but at most `capacity` bytes are backed at once: whole segments
// and mapped pages count, reserved address ranges do not. That is the model of
// a device with virtual memory (cuMemAddressReserve/cuMemMap), so expandable
// segments work. Freed segments and unmapped pages are given back to the OS
// (madvise(MADV_DONTNEED)).
//
// Pages stay PROT_NONE except while an operation that names an allocation
// runs: grantAccess() opens the pages the block touches when its count of
// running accessors goes from 0 to 1, revokeAccess() closes them when it
// returns to 0, except for a page shared with a neighbouring block that is
// still open. Only open blocks are recorded (open_). Limits: while an
// operation on a block runs, every host thread can read it, and so can the
// neighbours sharing its first and last page (blocks are 512-byte granular,
// pages 4 KiB).
//
// Work that names a block holds an AllocationRef, a use of the core's block
// (Core::useBlock): a block freed by the user while work on it is pending
// is not reused until that work is done (it still counts as allocated
// meanwhile), and a block named by a captured graph stays out of the cache
// until the graph is reset or destroyed.
//
// Thread-safety: all members are thread-safe. The raw-memory functions run
// under the caching allocator's device lock and take only the arena's own
// lock (a leaf); the open-block lock is never held while calling the
// core. Lifetime: never destroyed (the backend that owns the devices is
// kept by the adapter for the rest of the process).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "accel/adapter/backend.h"
#include "accel/adapter/core.h"
#include "types.h"

namespace accel::openreg::detail {

class DeviceMemory;
class DeviceTable;

// The host's page size: the granule of device segments, mapped pages,
// access protection and pinned pages. Never throws.
[[nodiscard]] inline std::size_t systemPageSize() noexcept {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// Address space per device, as a multiple of its capacity: room for
// expandable segments' reserved ranges next to ordinary segments.
inline constexpr std::size_t kAddressSpanFactor = 4;

// A counted reference to a live allocation, held by work that names it
// (queued, running or captured): the core keeps the block out of its cache
// while any lives. Copyable (copies share one use of the core's).
class AllocationRef {
 public:
  AllocationRef() noexcept = default;
  AllocationRef(DeviceMemory* owner, adapter::BlockUse use, adapter::Block block)
      : owner_(owner),
        use_(std::make_shared<const adapter::BlockUse>(std::move(use))),
        block_(block) {}

  [[nodiscard]] DeviceMemory* owner() const noexcept { return owner_; }
  [[nodiscard]] std::byte* data() const noexcept {
    return static_cast<std::byte*>(block_.base);
  }
  // The bytes an operation may touch: the request rounded up to the
  // allocator's 512-byte quantum.
  [[nodiscard]] std::size_t size() const noexcept {
    return (block_.bytes + 511) / 512 * 512;
  }

 private:
  DeviceMemory* owner_ = nullptr;
  std::shared_ptr<const adapter::BlockUse> use_;
  adapter::Block block_;  // bytes: what the block's owner asked for
};

class DeviceMemory {
 public:
  // Manages [base, base + capacity × kAddressSpanFactor), backing at most
  // `capacity` bytes (a multiple of page_size) at once.
  DeviceMemory(DeviceIndex device, std::byte* base, std::size_t capacity,
               std::size_t page_size) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // The live allocation that contains [ptr, ptr + bytes), referenced.
  // Throws InvalidArgument, naming `what`, for a range that is not inside one
  // live allocation (unallocated, freed, or running past the end).
  [[nodiscard]] AllocationRef resolve(const adapter::Core& core, const void* ptr,
                                      std::size_t bytes, std::string_view what);

  // Opens the block for host access while an operation runs. Throws
  // DeviceError if mprotect fails.
  void grantAccess(const AllocationRef& allocation);
  void revokeAccess(const AllocationRef& allocation) noexcept;

  // ---- raw memory for DeviceSegments (never throw) ----

  // A segment of `bytes` (a multiple of the page size), or nullptr when the
  // device's capacity or address range is used up.
  [[nodiscard]] void* takeSegment(std::size_t bytes) noexcept;
  void returnSegment(void* ptr, std::size_t bytes) noexcept;
  // Address range only, nothing backed; nullptr when the range is used up.
  [[nodiscard]] void* reserveRange(std::size_t bytes) noexcept;
  void releaseRange(void* ptr, std::size_t bytes) noexcept;
  // Backs pages of a reserved range; false when the capacity is used up.
  [[nodiscard]] bool mapPages(std::size_t bytes) noexcept;
  void unmapPages(void* ptr, std::size_t bytes) noexcept;
  // Bytes backed now (segments and mapped pages).
  [[nodiscard]] std::size_t backedBytes() const noexcept;

  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] DeviceIndex device() const noexcept { return device_; }

 private:
  // A free address range of `bytes`, counted as backed memory when `backed`;
  // nullptr when none (or, backed, the capacity is used up).
  [[nodiscard]] void* takeAddresses(std::size_t bytes, bool backed) noexcept;
  // Requires arena_mutex_.
  bool takeRange(std::size_t size, std::size_t& offset);
  void giveRange(std::size_t offset, std::size_t size);
  // The page-aligned range to close when the block at [first, last) closes:
  // without the first and last page when an open neighbour shares them.
  // Requires mutex_.
  [[nodiscard]] std::pair<std::uintptr_t, std::uintptr_t> closableRange(
      std::uintptr_t first, std::uintptr_t last) const noexcept;

  const DeviceIndex device_;
  std::byte* const base_;
  const std::size_t capacity_;
  const std::size_t page_size_;

  // Blocks open for host access: base -> {bytes, running operations}.
  struct OpenBlock {
    std::size_t size = 0;
    int accessors = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, OpenBlock> open_;

  mutable std::mutex arena_mutex_;                              // the raw address range
  std::map<std::size_t, std::size_t> free_by_offset_;           // offset -> size
  std::set<std::pair<std::size_t, std::size_t>> free_by_size_;  // {size, offset}
  std::size_t backed_ = 0;
};

// The raw memory of openreg's devices as the core's caching allocator draws
// it: segments and pages from the devices' address ranges. No stream events:
// a block reaches the cache only once no queued or captured operation names
// it (AllocationRef), which orders reuse by itself. checkAllocation is the
// device table's (lost devices, fork children, injected faults), asked while
// the table diverts a device's allocations (DeviceTable::checkAllocation).
//
// Given the device table it draws from, nothing else: the core's caches,
// built after the backend's init, ask for memory only once the table is
// open.
class DeviceSegments final : public adapter::Memory, public adapter::PageMapping {
 public:
  // `devices` must outlive this object (the backend owns both).
  DeviceSegments(DeviceTable& devices, std::size_t page_size) noexcept
      : devices_(devices), page_size_(page_size) {}

  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] adapter::MemoryInfo info(std::int8_t device) const noexcept override;
  [[nodiscard]] adapter::PageMapping* pages() noexcept override { return this; }
  [[nodiscard]] const char* outOfMemoryAdvice() const noexcept override {
    return "openreg devices have ACCEL_OPENREG_MEMORY bytes each; raise it for more";
  }
  void checkAllocation(std::int8_t device, std::size_t bytes) override;

  [[nodiscard]] std::size_t pageSize() const noexcept override { return page_size_; }
  [[nodiscard]] void* reserve(std::int8_t device, std::size_t bytes) override;
  void release(std::int8_t device, void* base, std::size_t bytes) noexcept override;
  [[nodiscard]] bool map(std::int8_t device, void* address, std::size_t bytes) override;
  void unmap(std::int8_t device, void* address, std::size_t bytes) noexcept override;

 private:
  // Device `index`, or null past the devices (the core checked the index
  // against its device count).
  [[nodiscard]] DeviceMemory* find(DeviceIndex index) const noexcept;
  // Device `index` of a segment or range the core got from it.
  [[nodiscard]] DeviceMemory& at(DeviceIndex index) const noexcept {
    return *find(index);
  }

  DeviceTable& devices_;
  std::size_t page_size_;
};

}  // namespace accel::openreg::detail
