#include "device_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "accel/error.h"
#include "accel/openreg/config.h"
#include "fork_state.h"

namespace accel::openreg::detail {
namespace {

void add(Stat& stat, std::int64_t delta) noexcept {
  stat.current += delta;
  if (delta > 0) {
    stat.allocated += delta;
    if (stat.current > stat.peak) stat.peak = stat.current;
  } else {
    stat.freed -= delta;
  }
}

std::int64_t signedSize(std::size_t bytes) noexcept {
  return static_cast<std::int64_t>(bytes);
}

}  // namespace

AllocationRef::AllocationRef(const AllocationRef& other) noexcept
    : allocation_(other.allocation_) {
  if (allocation_ != nullptr) allocation_->owner->retain(*allocation_);
}

AllocationRef::~AllocationRef() {
  if (allocation_ != nullptr) allocation_->owner->release(*allocation_);
}

DeviceMemory::DeviceMemory(Device device, std::byte* base, std::size_t capacity,
                           std::size_t page_size) noexcept
    : device_(device), base_(base), capacity_(capacity), page_size_(page_size) {
  if (capacity_ > 0) {
    free_by_offset_.emplace(0, capacity_);
    free_by_size_.emplace(capacity_, 0);
  }
}

DataPtr DeviceMemory::allocate(std::size_t bytes, MempoolId pool) {
  const std::size_t size = (bytes + page_size_ - 1) / page_size_ * page_size_;
  std::lock_guard<std::mutex> lock(mutex_);
  Allocation* allocation = nullptr;
  if (!pool.isDefault()) {
    auto found = pools_.find(pool);
    if (found != pools_.end()) {
      auto cached = found->second.cached.lower_bound(size);
      if (cached != found->second.cached.end()) {
        allocation = cached->second;
        found->second.cached.erase(cached);
      }
    }
  }
  if (allocation == nullptr) {
    std::size_t offset = 0;
    if (size < bytes || !takeRange(size, offset)) {
      ++stats_.num_ooms;
      const std::uint64_t used =
          static_cast<std::uint64_t>(stats_.reserved_bytes.current);
      throw OutOfMemory(accel::detail::concat(
          device_, " is out of memory: tried to allocate ", formatByteSize(bytes), " (",
          bytes, " bytes); ", formatByteSize(used), " of its ", formatByteSize(capacity_),
          " are in use and the largest free block is ",
          formatByteSize(largestFreeBlock()),
          ". Free memory (and synchronise streams that still use freed blocks), or raise "
          "ACCEL_OPENREG_MEMORY"));
    }
    allocation = new Allocation();
    allocation->owner = this;
    allocation->data = base_ + offset;
    allocation->size = size;
    allocation->pool = pool;
    blocks_.emplace(reinterpret_cast<std::uintptr_t>(allocation->data), allocation);
    add(stats_.reserved_bytes, signedSize(size));
    add(stats_.segments, 1);
    ++stats_.num_device_alloc;
  }
  allocation->requested = bytes;
  allocation->refs = 1;
  allocation->live = true;
  add(stats_.allocated_bytes, signedSize(allocation->size));
  add(stats_.active_bytes, signedSize(allocation->size));
  add(stats_.requested_bytes, signedSize(bytes));
  add(stats_.allocations, 1);
  return DataPtr(allocation->data, allocation, &DeviceMemory::freeFromDataPtr, device_);
}

void DeviceMemory::recordOutOfMemory() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.num_ooms;
}

void DeviceMemory::freeFromDataPtr(void* context) noexcept {
  // In a fork child the mutex may be held by a thread that no longer exists:
  // leak rather than risk a deadlock (the child cannot use the device anyway).
  if (isForkedChild()) return;
  auto* allocation = static_cast<Allocation*>(context);
  allocation->owner->freeByUser(*allocation);
}

void DeviceMemory::freeByUser(Allocation& allocation) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  allocation.live = false;
  add(stats_.allocated_bytes, -signedSize(allocation.size));
  add(stats_.requested_bytes, -signedSize(allocation.requested));
  add(stats_.allocations, -1);
  dropReference(allocation);
}

AllocationRef DeviceMemory::resolve(const void* ptr, std::size_t bytes,
                                    std::string_view what) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = blocks_.upper_bound(address);
  Allocation* allocation = next == blocks_.begin() ? nullptr : std::prev(next)->second;
  const bool inside =
      allocation != nullptr &&
      address < reinterpret_cast<std::uintptr_t>(allocation->data) + allocation->size;
  ACCEL_CHECK(inside, InvalidArgument, what, ": ", ptr, " is in ", device_,
              "'s address range but not in any of its allocations; pass memory "
              "allocated on ",
              device_);
  ACCEL_CHECK(allocation->live, InvalidArgument, what, ": ", ptr,
              " is in an allocation of ", device_,
              " that was already freed (use after free); keep the DataPtr alive "
              "while its memory is used");
  // Bounds are those the user asked for, not the page-rounded block: a
  // reference backend should catch the overrun a real device might forgive.
  const std::size_t offset = address - reinterpret_cast<std::uintptr_t>(allocation->data);
  const std::size_t available =
      offset < allocation->requested ? allocation->requested - offset : 0;
  ACCEL_CHECK(bytes <= available && offset < allocation->requested, InvalidArgument, what,
              ": ", bytes, " bytes from ", ptr, " run past the end of its allocation on ",
              device_, " (", allocation->requested, " bytes, ", available,
              " of them from this pointer on); check the size and the offset");
  ++allocation->refs;
  return AllocationRef(allocation);
}

void DeviceMemory::grantAccess(Allocation& allocation) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (allocation.accessors++ > 0) return;
  if (::mprotect(allocation.data, allocation.size, PROT_READ | PROT_WRITE) != 0) {
    const int error = errno;
    --allocation.accessors;
    throw DeviceError(accel::detail::concat(
        "openreg could not open ", allocation.size, " bytes of ", device_,
        " memory for an operation: mprotect failed: ", std::strerror(error),
        " (with vm.overcommit_memory=2 or a low vm.max_map_count, lower "
        "ACCEL_OPENREG_MEMORY or free allocations)"));
  }
}

void DeviceMemory::revokeAccess(Allocation& allocation) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--allocation.accessors > 0) return;
  // Closing a range never needs new memory; a failure would leave the block
  // readable, which only weakens the simulation.
  (void)::mprotect(allocation.data, allocation.size, PROT_NONE);
}

void DeviceMemory::retain(Allocation& allocation) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  ++allocation.refs;
}

void DeviceMemory::release(Allocation& allocation) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  dropReference(allocation);
}

void DeviceMemory::dropReference(Allocation& allocation) noexcept {
  if (--allocation.refs > 0) return;
  add(stats_.active_bytes, -signedSize(allocation.size));
  auto pool = allocation.pool.isDefault() ? pools_.end() : pools_.find(allocation.pool);
  if (pool != pools_.end()) {
    try {
      pool->second.cached.emplace(allocation.size, &allocation);
      return;
    } catch (...) {
      // No memory to remember the cached block: give it back instead.
    }
  }
  returnToDevice(allocation);
}

void DeviceMemory::returnToDevice(Allocation& allocation) noexcept {
  blocks_.erase(reinterpret_cast<std::uintptr_t>(allocation.data));
  try {
    giveRange(static_cast<std::size_t>(allocation.data - base_), allocation.size);
  } catch (...) {
    // The free list could not grow: the range is lost until exit, which is
    // only possible when the host itself is out of memory.
  }
  add(stats_.reserved_bytes, -signedSize(allocation.size));
  add(stats_.segments, -1);
  ++stats_.num_device_free;
  delete &allocation;
}

void DeviceMemory::retainPool(MempoolId pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++pools_[pool].users;
}

void DeviceMemory::releasePool(MempoolId pool) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = pools_.find(pool);
  if (found == pools_.end() || --found->second.users > 0) return;
  for (auto& [size, allocation] : found->second.cached) returnToDevice(*allocation);
  pools_.erase(found);
}

bool DeviceMemory::takeRange(std::size_t size, std::size_t& offset) {
  auto best = free_by_size_.lower_bound({size, 0});
  if (best == free_by_size_.end()) return false;
  const auto [block_size, block_offset] = *best;
  free_by_size_.erase(best);
  free_by_offset_.erase(block_offset);
  if (block_size > size) {
    free_by_offset_.emplace(block_offset + size, block_size - size);
    free_by_size_.emplace(block_size - size, block_offset + size);
  }
  offset = block_offset;
  return true;
}

void DeviceMemory::giveRange(std::size_t offset, std::size_t size) {
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && offset + size == next->first) {
    size += next->second;
    free_by_size_.erase({next->second, next->first});
    next = free_by_offset_.erase(next);
  }
  if (next != free_by_offset_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      offset = previous->first;
      size += previous->second;
      free_by_size_.erase({previous->second, previous->first});
      free_by_offset_.erase(previous);
    }
  }
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

std::size_t DeviceMemory::largestFreeBlock() const {
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

MemoryStats DeviceMemory::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceMemory::resetPeakStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Stat* stat :
       {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
        &stats_.requested_bytes, &stats_.allocations, &stats_.segments}) {
    stat->peak = stat->current;
  }
}

void DeviceMemory::emptyCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [offset, size] : free_by_offset_) {
    (void)::madvise(base_ + offset, size, MADV_DONTNEED);
  }
}

}  // namespace accel::openreg::detail
