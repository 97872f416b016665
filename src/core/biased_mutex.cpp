#include "biased_mutex.h"

#include <algorithm>
#include <new>
#include <thread>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace accel::detail {

constinit thread_local BiasedThreadRecord* t_biased_record
    __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

// Set when the thread's record went back (its thread_local destructors ran):
// code that locks later in that thread's exit uses the inner mutex only.
constinit thread_local bool t_record_returned __attribute__((tls_model("initial-exec"))) =
    false;

// Records of exited threads, for the next new threads. Never destroyed: a
// thread may exit during static destruction.
struct RecordPool {
  std::mutex mutex;
  BiasedThreadRecord* free = nullptr;
};

RecordPool& recordPool() noexcept {
  static auto* pool = new RecordPool;
  return *pool;
}

// A thread_local whose destructor gives the thread's record back.
struct RecordReturn {
  RecordReturn() = default;
  RecordReturn(const RecordReturn&) = delete;
  RecordReturn& operator=(const RecordReturn&) = delete;
  ~RecordReturn() {
    BiasedThreadRecord* record = t_biased_record;
    t_biased_record = nullptr;
    t_record_returned = true;
    if (record == nullptr) return;
    RecordPool& pool = recordPool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    record->next_free = pool.free;
    pool.free = record;
  }
};

// The calling thread's record, made (or taken from the pool) on first use;
// null when none can be had (out of memory, or the thread is exiting).
BiasedThreadRecord* recordOfThisThread() noexcept {
  if (BiasedThreadRecord* record = t_biased_record) return record;
  if (t_record_returned) return nullptr;
  BiasedThreadRecord* record = nullptr;
  {
    RecordPool& pool = recordPool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    record = pool.free;
    if (record != nullptr) pool.free = record->next_free;
  }
  if (record == nullptr) record = new (std::nothrow) BiasedThreadRecord;
  if (record == nullptr) return nullptr;
  record->next_free = nullptr;
  static thread_local RecordReturn give_back_at_exit;
  (void)give_back_at_exit;
  t_biased_record = record;
  return record;
}

#if defined(__linux__) && defined(__NR_membarrier)
long membarrier(int command) noexcept { return syscall(__NR_membarrier, command, 0, 0); }

bool registerMembarrier() noexcept {
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

// Makes every running thread of the process execute a full memory barrier.
void heavyBarrier() noexcept {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // The registration is kept for the process's life (a fork child inherits
  // it), so this is only reached if a seccomp filter appeared meanwhile.
  if (membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;
  // Last resort: a store that another processor has issued leaves its store
  // buffer within microseconds; 10 ms is far beyond that.
  timespec pause{0, 10'000'000};
  nanosleep(&pause, nullptr);
}
#else
bool registerMembarrier() noexcept { return false; }
void heavyBarrier() noexcept {}
#endif

void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits for the revoked owner to leave its critical section: spins briefly,
// then yields (the owner may hold the lock across a slow device allocation).
void waitUntilOutside(const BiasedThreadRecord& owner) noexcept {
  for (int spins = 0; owner.inside.load(std::memory_order_acquire); ++spins) {
    if (spins < 128) {
      cpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

bool BiasedMutex::biasSupported() noexcept {
  static const bool supported = registerMembarrier();
  return supported;
}

void BiasedMutex::lockSlow() noexcept {
  mutex_.lock();
  BiasedThreadRecord* me = recordOfThisThread();
  BiasedThreadRecord* owner = bias_.load(std::memory_order_relaxed);
  if (owner != nullptr && owner != me) {
    // Withdraw, then make sure the owner either saw that or is seen inside.
    bias_.store(nullptr, std::memory_order_seq_cst);
    heavyBarrier();
    waitUntilOutside(*owner);
    grant_after_ = std::min(grant_after_ * 2, kMaxGrantAfter);
    last_ = nullptr;
    streak_ = 0;
    owner = nullptr;
  }
  if (me == nullptr || owner == me) return;
  if (me == last_) {
    streak_ = std::min(streak_ + 1, kMaxGrantAfter);
  } else {
    last_ = me;
    streak_ = 1;
  }
  grant_on_unlock_ = streak_ >= grant_after_ && biasSupported();
}

void BiasedMutex::unlockSlow() noexcept {
  if (grant_on_unlock_) {
    grant_on_unlock_ = false;
    // Published by the unlock below to whoever takes mutex_ next; the
    // grantee (this thread) reads it in program order.
    bias_.store(last_, std::memory_order_relaxed);
  }
  mutex_.unlock();
}

}  // namespace accel::detail
