#include "memory/process_barrier.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace accel::detail {
namespace {

enum class Support : unsigned char { Unknown, Yes, No };
constinit std::atomic<Support> g_support{Support::Unknown};

#if defined(__linux__) && defined(__NR_membarrier)
long membarrier(int command) noexcept { return syscall(__NR_membarrier, command, 0, 0); }

bool registerMembarrier() noexcept {
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

#if defined(__x86_64__)
// Taking write access away from a page this process has touched makes the
// kernel flush that page from the TLB of every processor that may cache it,
// by an inter-processor interrupt to each one running the process; an
// interrupt is serialising on x86. (.NET's FlushProcessWriteBuffers does the
// same where membarrier is missing.)
bool mprotectBarrier() noexcept {
  static constinit std::atomic<void*> page{nullptr};
  void* at = page.load(std::memory_order_acquire);
  if (at == nullptr) {
    void* made =
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (made == MAP_FAILED) return false;
    void* expected = nullptr;
    if (!page.compare_exchange_strong(expected, made)) {
      munmap(made, 4096);
      made = expected;
    }
    at = made;
  }
  if (mprotect(at, 4096, PROT_READ | PROT_WRITE) != 0) return false;
  // Touch it so that this processor's TLB holds it, then take write access.
  static_cast<volatile char*>(at)[0] = 1;
  return mprotect(at, 4096, PROT_READ) == 0;
}
#else
bool mprotectBarrier() noexcept { return false; }
#endif
#else
bool registerMembarrier() noexcept { return false; }
long membarrier(int) noexcept { return -1; }
bool mprotectBarrier() noexcept { return false; }
#endif

}  // namespace

bool processBarrierSupported() noexcept {
  Support answer = g_support.load(std::memory_order_acquire);
  if (answer == Support::Unknown) [[unlikely]] {
    // Several first askers may all register: registering again is harmless.
    answer = registerMembarrier() ? Support::Yes : Support::No;
    g_support.store(answer, std::memory_order_release);
  }
  return answer == Support::Yes;
}

void processBarrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  if (membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;
#endif
  if (mprotectBarrier()) return;
  std::fputs(
      "accelhooks: membarrier() stopped working after it was registered (a seccomp "
      "filter installed later?) and no other process-wide barrier is available; "
      "set ACCEL_ALLOC_CONF=thread_caches:false to run without it\n",
      stderr);
  std::abort();
}

}  // namespace accel::detail
