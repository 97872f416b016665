#include "pinned_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <mutex>

#include "events.h"

namespace accel::openreg::detail {

void* PinnedPages::allocate(std::int8_t /*device*/, std::size_t bytes) {
  // The cache asks for powers of two of at least 512 B; whole pages keep
  // every block page-aligned and alone on its pages.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t length = (bytes + page - 1) / page * page;
  if (length < bytes) return nullptr;
  void* memory =
      ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;  // the cache frees and retries
  try {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    ranges_.emplace(reinterpret_cast<std::uintptr_t>(memory), length);
  } catch (...) {
    ::munmap(memory, length);
    throw;
  }
  return memory;
}

void PinnedPages::free(std::int8_t /*device*/, void* data,
                       std::size_t /*bytes*/) noexcept {
  std::size_t length = 0;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto found = ranges_.find(reinterpret_cast<std::uintptr_t>(data));
    if (found == ranges_.end()) return;
    length = found->second;
    ranges_.erase(found);
  }
  ::munmap(data, length);
}

bool PinnedPages::isPinned(const void* ptr) const noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto after = ranges_.upper_bound(address);
  if (after == ranges_.begin()) return false;
  const auto& [first, length] = *std::prev(after);
  return address - first < length;
}

std::uint64_t PinnedPages::record(Stream stream) {
  const EventId event = events_.create(stream.device, EventFlags{});
  try {
    events_.record(event, stream);
  } catch (...) {
    events_.destroy(event);
    throw;
  }
  return event;
}

bool PinnedPages::completed(std::uint64_t event) noexcept {
  try {
    return events_.query(event);
  } catch (...) {
    return true;  // a lost device runs no more work on the block
  }
}

void PinnedPages::wait(Stream stream, std::uint64_t event) {
  events_.block(event, stream);
}

void PinnedPages::release(std::uint64_t event) noexcept { events_.destroy(event); }

void PinnedPages::synchronize(std::uint64_t event) {
  try {
    events_.synchronize(event);
  } catch (const DeviceError&) {
    // The device was lost: its work is over, the block is free to go.
  }
}

}  // namespace accel::openreg::detail
