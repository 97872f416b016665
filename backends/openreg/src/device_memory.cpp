#include "device_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "accel/error.h"
#include "fork_state.h"

namespace accel::openreg::detail {

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
    free_by_offset_.emplace(0, capacity_ * kAddressSpanFactor);
    free_by_size_.emplace(capacity_ * kAddressSpanFactor, 0);
  }
}

// ---- allocations ----

DataPtr DeviceMemory::allocate(std::size_t bytes, StreamId stream) {
  DataPtr block;
  try {
    block = allocator_->allocate(device_.index(), bytes, Stream(device_, stream));
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(accel::detail::concat(
        e.message(),
        " (openreg devices have ACCEL_OPENREG_MEMORY bytes each; raise it for "
        "more)"));
  }
  auto* allocation = new Allocation();
  allocation->owner = this;
  allocation->data = static_cast<std::byte*>(block.get());
  allocation->requested = bytes;
  allocation->refs = 1;
  allocation->live = true;
  allocation->block = std::move(block);
  // The block size only matters for opening pages: the request rounded up to
  // the allocator's 512-byte quantum covers every byte a user may touch.
  allocation->size = (bytes + 511) / 512 * 512;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.emplace(reinterpret_cast<std::uintptr_t>(allocation->data), allocation);
  } catch (...) {
    delete allocation;
    throw;
  }
  return DataPtr(allocation->data, allocation, &DeviceMemory::freeFromDataPtr, device_);
}

void DeviceMemory::failAllocation(std::size_t bytes, StreamId stream) {
  allocator_->failAsOutOfMemory(device_.index(), bytes, Stream(device_, stream));
}

void DeviceMemory::freeFromDataPtr(void* context) noexcept {
  // In a fork child the locks may be held by a thread that no longer exists:
  // leak rather than risk a deadlock (the child cannot use the device anyway).
  if (isForkedChild()) return;
  auto* allocation = static_cast<Allocation*>(context);
  allocation->owner->freeByUser(*allocation);
}

void DeviceMemory::freeByUser(Allocation& allocation) noexcept {
  Allocation* done = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    allocation.live = false;
    done = dropReference(allocation);
  }
  returnToCache(done);
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
  // Bounds are those the user asked for, not the rounded block: a reference
  // backend should catch the overrun a real device might forgive.
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
  const auto begin =
      reinterpret_cast<std::uintptr_t>(allocation.data) / page_size_ * page_size_;
  const auto end = (reinterpret_cast<std::uintptr_t>(allocation.data) + allocation.size +
                    page_size_ - 1) /
                   page_size_ * page_size_;
  if (::mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE) !=
      0) {
    const int error = errno;
    --allocation.accessors;
    throw DeviceError(accel::detail::concat(
        "openreg could not open ", allocation.size, " bytes of ", device_,
        " memory for an operation: mprotect failed: ", std::strerror(error),
        " (with vm.overcommit_memory=2 or a low vm.max_map_count, lower "
        "ACCEL_OPENREG_MEMORY or free allocations)"));
  }
}

std::pair<std::uintptr_t, std::uintptr_t> DeviceMemory::closableRange(
    const Allocation& allocation) const noexcept {
  const auto first = reinterpret_cast<std::uintptr_t>(allocation.data);
  const std::uintptr_t last = first + allocation.size;  // one past
  std::uintptr_t begin = first / page_size_ * page_size_;
  std::uintptr_t end = (last + page_size_ - 1) / page_size_ * page_size_;
  // Only blocks inside the first and last page can share them; at 512 bytes
  // a block, a few at most.
  auto here = blocks_.find(first);
  // An open block holds a reference, so it is always in blocks_.
  if (here == blocks_.end()) return {begin, end};
  for (auto it = here; it != blocks_.begin();) {
    --it;
    const Allocation& before = *it->second;
    if (reinterpret_cast<std::uintptr_t>(before.data) + before.size <= begin) break;
    if (before.accessors > 0) {
      begin += page_size_;
      break;
    }
  }
  for (auto it = std::next(here); it != blocks_.end(); ++it) {
    if (it->first >= end) break;
    if (it->second->accessors > 0) {
      end -= page_size_;
      break;
    }
  }
  return {begin, end};
}

void DeviceMemory::revokeAccess(Allocation& allocation) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--allocation.accessors > 0) return;
  const auto [begin, end] = closableRange(allocation);
  // Closing a range never needs new memory; a failure would leave the block
  // readable, which only weakens the simulation.
  if (begin < end) {
    (void)::mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_NONE);
  }
}

void DeviceMemory::retain(Allocation& allocation) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  ++allocation.refs;
}

void DeviceMemory::release(Allocation& allocation) noexcept {
  Allocation* done = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done = dropReference(allocation);
  }
  returnToCache(done);
}

Allocation* DeviceMemory::dropReference(Allocation& allocation) noexcept {
  if (--allocation.refs > 0) return nullptr;
  blocks_.erase(reinterpret_cast<std::uintptr_t>(allocation.data));
  return &allocation;
}

void DeviceMemory::returnToCache(Allocation* allocation) noexcept {
  // Outside the allocation lock: the caching allocator takes its own. The
  // address left blocks_ first, so a new allocation reusing it cannot clash.
  delete allocation;
}

// ---- raw memory ----

void* DeviceMemory::takeSegment(std::size_t bytes) noexcept {
  return takeAddresses(bytes, true);
}

void* DeviceMemory::takeAddresses(std::size_t bytes, bool backed) noexcept {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  if (backed && bytes > capacity_ - backed_) return nullptr;
  std::size_t offset = 0;
  try {
    if (!takeRange(bytes, offset)) return nullptr;
  } catch (...) {
    return nullptr;  // no memory for the free list's bookkeeping
  }
  if (backed) backed_ += bytes;
  return base_ + offset;
}

void DeviceMemory::returnSegment(void* ptr, std::size_t bytes) noexcept {
  // The host pages go back to the OS: a freed segment costs no host memory.
  (void)::madvise(ptr, bytes, MADV_DONTNEED);
  std::lock_guard<std::mutex> lock(arena_mutex_);
  backed_ -= bytes;
  try {
    giveRange(static_cast<std::size_t>(static_cast<std::byte*>(ptr) - base_), bytes);
  } catch (...) {
    // The free list could not grow: the range is lost until exit, which is
    // only possible when the host itself is out of memory.
  }
}

void* DeviceMemory::reserveRange(std::size_t bytes) noexcept {
  return takeAddresses(bytes, false);
}

void DeviceMemory::releaseRange(void* ptr, std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  try {
    giveRange(static_cast<std::size_t>(static_cast<std::byte*>(ptr) - base_), bytes);
  } catch (...) {
    // As in returnSegment.
  }
}

bool DeviceMemory::mapPages(std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  if (bytes > capacity_ - backed_) return false;
  backed_ += bytes;
  return true;
}

void DeviceMemory::unmapPages(void* ptr, std::size_t bytes) noexcept {
  (void)::madvise(ptr, bytes, MADV_DONTNEED);
  std::lock_guard<std::mutex> lock(arena_mutex_);
  backed_ -= bytes;
}

std::size_t DeviceMemory::backedBytes() const noexcept {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  return backed_;
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

// ---- DeviceSegments ----

void* DeviceSegments::allocateSegment(DeviceIndex index, std::size_t bytes) {
  DeviceMemory* device = find(index);
  return device != nullptr ? device->takeSegment(bytes) : nullptr;
}

void DeviceSegments::freeSegment(DeviceIndex index, void* ptr,
                                 std::size_t bytes) noexcept {
  at(index).returnSegment(ptr, bytes);
}

memory::SegmentSource::DeviceMemoryInfo DeviceSegments::memoryInfo(
    DeviceIndex index) const noexcept {
  const DeviceMemory* device = find(index);
  if (device == nullptr) return {};
  return {device->capacity(), device->capacity() - device->backedBytes()};
}

void* DeviceSegments::reserveAddressRange(DeviceIndex index, std::size_t bytes) {
  DeviceMemory* device = find(index);
  return device != nullptr ? device->reserveRange(bytes) : nullptr;
}

void DeviceSegments::releaseAddressRange(DeviceIndex index, void* base,
                                         std::size_t bytes) noexcept {
  at(index).releaseRange(base, bytes);
}

bool DeviceSegments::mapPages(DeviceIndex index, void* /*address*/, std::size_t bytes) {
  // The pages exist (the range is reserved PROT_NONE, MAP_NORESERVE); mapping
  // is the capacity accounting. Host pages appear when an operation first
  // writes them and go back on unmap.
  DeviceMemory* device = find(index);
  return device != nullptr && device->mapPages(bytes);
}

void DeviceSegments::unmapPages(DeviceIndex index, void* address,
                                std::size_t bytes) noexcept {
  at(index).unmapPages(address, bytes);
}

}  // namespace accel::openreg::detail
