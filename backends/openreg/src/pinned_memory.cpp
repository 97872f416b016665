#include "pinned_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "accel/error.h"
#include "accel/kit/config.h"
#include "fork_state.h"
#include "runtime.h"

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
        "openreg pinned host allocator: could not allocate ", kit::formatByteSize(bytes),
        " (", bytes, " bytes): ", std::strerror(error),
        "; free pinned buffers or allocate less"));
  }
  try {
    Runtime::instance().addresses().insert(memory, length, device(),
                                           kit::MemoryKind::Pinned);
  } catch (...) {
    ::munmap(memory, length);
    throw;
  }
  return DataPtr(memory, memory, &PinnedMemory::free, device());
}

void PinnedMemory::free(void* context) noexcept {
  // In a fork child the lock may belong to a thread that no longer exists.
  if (isForkedChild()) return;
  kit::AddressMap& addresses = Runtime::instance().addresses();
  const std::optional<kit::AddressRange> block = addresses.find(context);
  if (!block || !addresses.erase(context)) return;
  ::munmap(context, block->size);
}

Device PinnedMemory::device() const noexcept { return Device{}; }

}  // namespace accel::openreg::detail
