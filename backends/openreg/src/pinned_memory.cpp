#include "pinned_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include "accel/error.h"
#include "fork_state.h"
#include "runtime.h"

namespace accel::openreg::detail {

PinnedMemory& PinnedMemory::instance() noexcept {
  static PinnedMemory* pinned = new PinnedMemory();  // never destroyed: see lifecycle
  return *pinned;
}

void* PinnedMemory::PageSource::allocateSegment(DeviceIndex, std::size_t bytes) {
  // The cache asks for powers of two of at least 512 B; whole pages keep
  // every block page-aligned and alone on its pages.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t length = (bytes + page - 1) / page * page;
  if (length < bytes) return nullptr;
  void* memory =
      ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;  // the cache frees and retries
  try {
    Runtime::instance().addresses().insert(memory, length, Device{},
                                           kit::MemoryKind::Pinned);
  } catch (...) {
    ::munmap(memory, length);
    throw;
  }
  return memory;
}

void PinnedMemory::PageSource::freeSegment(DeviceIndex, void* ptr, std::size_t) noexcept {
  kit::AddressMap& addresses = Runtime::instance().addresses();
  const std::optional<kit::AddressRange> block = addresses.find(ptr);
  if (!block || !addresses.erase(ptr)) return;
  ::munmap(ptr, block->size);
}

EventId PinnedMemory::PageSource::recordEvent(Stream stream) {
  Events& events = Runtime::instance().events();
  const EventId event = events.create(stream.device.index(), EventFlags{});
  try {
    events.record(event, stream);
  } catch (...) {
    events.destroy(event);
    throw;
  }
  return event;
}

bool PinnedMemory::PageSource::eventCompleted(EventId event) noexcept {
  try {
    return Runtime::instance().events().query(event);
  } catch (...) {
    return true;  // a lost device runs no more work on the block
  }
}

void PinnedMemory::PageSource::releaseEvent(EventId event) noexcept {
  Runtime::instance().events().destroy(event);
}

void PinnedMemory::PageSource::synchronizeEvent(EventId event) {
  try {
    Runtime::instance().events().synchronize(event);
  } catch (const DeviceError&) {
    // The device was lost: its work is over, the block is free to go.
  }
}

DataPtr PinnedMemory::allocate(std::size_t bytes) {
  // This wrapper, not the core's cache, is what getPinnedMemoryAllocator
  // hands out, so the fork-child refusal of a kept allocator is openreg's.
  checkNotForkedChild("pinned allocate");
  DataPtr cached = cache_.allocate(bytes);
  if (!cached) return DataPtr(nullptr, nullptr, nullptr, device());
  void* data = cached.get();
  auto [context, deleter] = cached.releaseContext();
  // The cache's deleter is one function for every block; openreg's own
  // deleter wraps it to keep the fork-child rule below.
  cache_deleter_.store(deleter, std::memory_order_relaxed);
  return DataPtr(data, context, &PinnedMemory::free, device());
}

void PinnedMemory::free(void* context) noexcept {
  // In a fork child the cache's lock may belong to a thread that no longer
  // exists: leak rather than risk a deadlock.
  if (isForkedChild()) return;
  instance().cache_deleter_.load(std::memory_order_relaxed)(context);
}

bool PinnedMemory::recordStreamAt(const void* ptr, Stream stream) {
  return cache_.recordStreamAt(ptr, stream);
}

Device PinnedMemory::device() const noexcept { return Device{}; }

}  // namespace accel::openreg::detail
