#include "pinned_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "accel/error.h"
#include "accel/openreg/config.h"
#include "fork_state.h"

namespace accel::openreg::detail {

PinnedMemory& PinnedMemory::instance() noexcept {
  static PinnedMemory* pinned = new PinnedMemory();  // never destroyed: see lifecycle
  return *pinned;
}

DataPtr PinnedMemory::allocate(std::size_t bytes) {
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, device());
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t length = (bytes + page - 1) / page * page;
  void* memory = length < bytes ? MAP_FAILED
                                : ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    const int error = errno;
    throw OutOfMemory(accel::detail::concat(
        "openreg pinned host allocator: could not allocate ", formatByteSize(bytes), " (",
        bytes, " bytes): ", std::strerror(error),
        "; free pinned buffers or allocate less"));
  }
  const auto start = reinterpret_cast<std::uintptr_t>(memory);
  try {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    blocks_.emplace(start, length);
  } catch (...) {
    ::munmap(memory, length);
    throw;
  }
  return DataPtr(memory, memory, &PinnedMemory::free, device());
}

void PinnedMemory::free(void* context) noexcept {
  // In a fork child the lock may belong to a thread that no longer exists.
  if (isForkedChild()) return;
  PinnedMemory& self = instance();
  std::size_t length = 0;
  {
    std::unique_lock<std::shared_mutex> lock(self.mutex_);
    auto found = self.blocks_.find(reinterpret_cast<std::uintptr_t>(context));
    if (found == self.blocks_.end()) return;
    length = found->second;
    self.blocks_.erase(found);
  }
  ::munmap(context, length);
}

Device PinnedMemory::device() const noexcept { return Device{}; }

bool PinnedMemory::contains(const void* ptr) const noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto next = blocks_.upper_bound(address);
  if (next == blocks_.begin()) return false;
  auto block = std::prev(next);
  return address - block->first < block->second;
}

}  // namespace accel::openreg::detail
