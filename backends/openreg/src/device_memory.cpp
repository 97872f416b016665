#include "device_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "device_table.h"

namespace accel::openreg::detail {
DeviceMemory::DeviceMemory(DeviceIndex device, std::byte* base, std::size_t capacity,
                           std::size_t page_size) noexcept
    : device_(device), base_(base), capacity_(capacity), page_size_(page_size) {
  if (capacity_ > 0) {
    free_by_offset_.emplace(0, capacity_ * kAddressSpanFactor);
    free_by_size_.emplace(capacity_ * kAddressSpanFactor, 0);
  }
}

// ---- allocations ----

AllocationRef DeviceMemory::resolve(const adapter::Core& core, const void* ptr,
                                    std::size_t bytes, std::string_view what) {
  adapter::BlockLookup found = core.useBlock(ptr);
  ACCEL_ADAPTER_CHECK(found.state != ACCEL_BLOCK_NONE, InvalidArgument, what, ": ", ptr,
                      " is in ", DeviceName{device_},
                      "'s address range but not in any of its allocations; pass memory "
                      "allocated on ",
                      DeviceName{device_});
  ACCEL_ADAPTER_CHECK(found.state == ACCEL_BLOCK_LIVE, InvalidArgument, what, ": ", ptr,
                      " is in an allocation of ", DeviceName{device_},
                      " that was already freed (use after free); keep the DataPtr alive "
                      "while its memory is used");
  // Bounds are those the user asked for, not the rounded block: a reference
  // backend should catch the overrun a real device might forgive.
  const std::size_t requested = found.block.bytes;
  const std::size_t offset = static_cast<const std::byte*>(ptr) -
                             static_cast<const std::byte*>(found.block.base);
  const std::size_t available = offset < requested ? requested - offset : 0;
  ACCEL_ADAPTER_CHECK(bytes <= available && offset < requested, InvalidArgument, what,
                      ": ", bytes, " bytes from ", ptr,
                      " run past the end of its allocation on ", DeviceName{device_},
                      " (", requested, " bytes, ", available,
                      " of them from this pointer on); check the size and the offset");
  return AllocationRef(this, std::move(found.use), found.block);
}

void DeviceMemory::grantAccess(const AllocationRef& allocation) {
  const auto first = reinterpret_cast<std::uintptr_t>(allocation.data());
  std::lock_guard<std::mutex> lock(mutex_);
  OpenBlock& open =
      open_.try_emplace(first, OpenBlock{allocation.size(), 0}).first->second;
  if (open.accessors++ > 0) return;
  const std::uintptr_t begin = first / page_size_ * page_size_;
  const std::uintptr_t end =
      (first + allocation.size() + page_size_ - 1) / page_size_ * page_size_;
  if (::mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE) !=
      0) {
    const int error = errno;
    open_.erase(first);
    throw DeviceError(concat(
        "openreg could not open ", allocation.size(), " bytes of ", DeviceName{device_},
        " memory for an operation: mprotect failed: ", std::strerror(error),
        " (with vm.overcommit_memory=2 or a low vm.max_map_count, lower "
        "ACCEL_OPENREG_MEMORY or free allocations)"));
  }
}

std::pair<std::uintptr_t, std::uintptr_t> DeviceMemory::closableRange(
    std::uintptr_t first, std::uintptr_t last) const noexcept {
  std::uintptr_t begin = first / page_size_ * page_size_;
  std::uintptr_t end = (last + page_size_ - 1) / page_size_ * page_size_;
  // Blocks do not overlap, so only the open neighbours next to it in
  // address order can share its first or last page.
  auto here = open_.find(first);
  if (here == open_.end()) return {begin, end};
  if (here != open_.begin()) {
    const auto previous = std::prev(here);
    if (previous->first + previous->second.size > begin) begin += page_size_;
  }
  const auto next = std::next(here);
  if (next != open_.end() && next->first < end) end -= page_size_;
  return {begin, end};
}

void DeviceMemory::revokeAccess(const AllocationRef& allocation) noexcept {
  const auto first = reinterpret_cast<std::uintptr_t>(allocation.data());
  std::lock_guard<std::mutex> lock(mutex_);
  auto open = open_.find(first);
  if (open == open_.end() || --open->second.accessors > 0) return;
  const auto [begin, end] = closableRange(first, first + open->second.size);
  open_.erase(open);
  // Closing a range never needs new memory; a failure would leave the block
  // readable, which only weakens the simulation.
  if (begin < end) {
    (void)::mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_NONE);
  }
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

DeviceMemory* DeviceSegments::find(DeviceIndex index) const noexcept {
  return devices_.memory(index);
}

void DeviceSegments::checkAllocation(std::int8_t device, std::size_t bytes) {
  devices_.checkAllocation(device, bytes);
}

void* DeviceSegments::allocate(std::int8_t index, std::size_t bytes) {
  DeviceMemory* device = find(index);
  return device != nullptr ? device->takeSegment(bytes) : nullptr;
}

void DeviceSegments::free(std::int8_t index, void* ptr, std::size_t bytes) noexcept {
  at(index).returnSegment(ptr, bytes);
}

adapter::MemoryInfo DeviceSegments::info(std::int8_t index) const noexcept {
  const DeviceMemory* device = find(index);
  if (device == nullptr) return {};
  return {device->capacity(), device->capacity() - device->backedBytes()};
}

void* DeviceSegments::reserve(std::int8_t index, std::size_t bytes) {
  DeviceMemory* device = find(index);
  return device != nullptr ? device->reserveRange(bytes) : nullptr;
}

void DeviceSegments::release(std::int8_t index, void* base, std::size_t bytes) noexcept {
  at(index).releaseRange(base, bytes);
}

bool DeviceSegments::map(std::int8_t index, void* /*address*/, std::size_t bytes) {
  // The pages exist (the range is reserved PROT_NONE, MAP_NORESERVE); mapping
  // is the capacity accounting. Host pages appear when an operation first
  // writes them and go back on unmap.
  DeviceMemory* device = find(index);
  return device != nullptr && device->mapPages(bytes);
}

void DeviceSegments::unmap(std::int8_t index, void* address, std::size_t bytes) noexcept {
  at(index).unmapPages(address, bytes);
}

}  // namespace accel::openreg::detail
