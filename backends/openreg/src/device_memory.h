// DeviceMemory: the memory of one simulated device, its protection and its
// accounting.
//
// A device owns a fixed slice of an address range that openreg reserves at
// start-up with PROT_NONE (no host access). Allocations are page-granular
// blocks of that slice, handed out best-fit from a free list that coalesces
// on free. Pages stay PROT_NONE except while an operation that names the
// allocation runs: grantAccess() makes the block readable and writable when
// its count of running accessors goes from 0 to 1, revokeAccess() removes the
// access when it returns to 0, both under the device's mutex, so two kernels
// on different streams can use one allocation (or different allocations of one
// device) at once. Because blocks never share a page, access to one block never
// opens another. The limit of the design: while any operation on a block
// runs, every host thread can read it too; protection is per block, not per
// thread.
//
// Blocks are reference counted: the user's DataPtr holds one reference and
// each queued or captured operation that names the block holds another, so a
// block freed by the user while work on it is pending is not reused until the
// work is done (it counts as "active" meanwhile). Blocks allocated during a
// graph capture belong to the capture's pool: when freed they stay reserved
// for that pool (reused by its later allocations) until the last graph using
// the pool is reset or destroyed.
//
// Thread-safety: all members are thread-safe (one mutex per device).
// Lifetime: never destroyed (the runtime that owns it is leaked on purpose).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "accel/allocator.h"
#include "accel/device.h"
#include "accel/graph.h"
#include "accel/memory_stats.h"

namespace accel::openreg::detail {

class DeviceMemory;

// One block of device memory. Fields other than the range are guarded by
// the owner's mutex.
struct Allocation {
  DeviceMemory* owner = nullptr;
  std::byte* data = nullptr;
  std::size_t size = 0;       // whole pages
  std::size_t requested = 0;  // what the user asked for
  MempoolId pool;             // default: not in a graph pool
  int refs = 0;               // the user's (while live) plus operations'
  bool live = false;          // allocated to the user, not freed yet
  int accessors = 0;          // running operations that opened it
};

// A counted reference to an Allocation: keeps the block from being reused
// while work that names it is queued, running or captured.
class AllocationRef {
 public:
  AllocationRef() noexcept = default;
  // Adopts a reference already counted in allocation->refs.
  explicit AllocationRef(Allocation* allocation) noexcept : allocation_(allocation) {}
  AllocationRef(const AllocationRef& other) noexcept;
  AllocationRef(AllocationRef&& other) noexcept
      : allocation_(std::exchange(other.allocation_, nullptr)) {}
  AllocationRef& operator=(AllocationRef other) noexcept {
    std::swap(allocation_, other.allocation_);
    return *this;
  }
  ~AllocationRef();

  [[nodiscard]] Allocation* get() const noexcept { return allocation_; }
  Allocation* operator->() const noexcept { return allocation_; }

 private:
  Allocation* allocation_ = nullptr;
};

class DeviceMemory {
 public:
  // Manages [base, base + capacity); capacity is a multiple of page_size.
  DeviceMemory(Device device, std::byte* base, std::size_t capacity,
               std::size_t page_size) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // A new allocation of at least `bytes` (> 0) for the user, from `pool` when
  // that is not the default. Throws OutOfMemory when no free block fits.
  [[nodiscard]] DataPtr allocate(std::size_t bytes, MempoolId pool);
  // Counts an OutOfMemory raised on this device's behalf (fault injection).
  void recordOutOfMemory() noexcept;

  // The live allocation that contains [ptr, ptr + bytes), referenced.
  // Throws InvalidArgument, naming `what`, for a range that is not inside one
  // live allocation (unallocated, freed, or running past the end).
  [[nodiscard]] AllocationRef resolve(const void* ptr, std::size_t bytes,
                                      std::string_view what);

  // Opens the block for host access while an operation runs. Throws
  // DeviceError if mprotect fails.
  void grantAccess(Allocation& allocation);
  void revokeAccess(Allocation& allocation) noexcept;

  void retain(Allocation& allocation) noexcept;
  void release(Allocation& allocation) noexcept;

  // A graph pool is alive while at least one graph holds it.
  void retainPool(MempoolId pool);
  void releasePool(MempoolId pool) noexcept;

  [[nodiscard]] MemoryStats stats() const;
  void resetPeakStats();
  // Gives the host pages behind unallocated device memory back to the OS
  // (madvise(MADV_DONTNEED)); the address range stays reserved.
  void emptyCache();

  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] Device device() const noexcept { return device_; }

 private:
  struct Pool {
    int users = 0;
    std::multimap<std::size_t, Allocation*> cached;  // freed blocks, by size
  };

  static void freeFromDataPtr(void* context) noexcept;
  void freeByUser(Allocation& allocation) noexcept;

  // The helpers below require mutex_.
  bool takeRange(std::size_t size, std::size_t& offset);
  void giveRange(std::size_t offset, std::size_t size);
  void dropReference(Allocation& allocation) noexcept;
  void returnToDevice(Allocation& allocation) noexcept;
  [[nodiscard]] std::size_t largestFreeBlock() const;

  const Device device_;
  std::byte* const base_;
  const std::size_t capacity_;
  const std::size_t page_size_;

  mutable std::mutex mutex_;
  std::map<std::size_t, std::size_t> free_by_offset_;           // offset -> size
  std::set<std::pair<std::size_t, std::size_t>> free_by_size_;  // {size, offset}
  std::map<std::uintptr_t, Allocation*> blocks_;  // every reserved block, by address
  std::map<MempoolId, Pool> pools_;
  MemoryStats stats_;
};

}  // namespace accel::openreg::detail
