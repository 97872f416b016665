#include "memory/biased_mutex.h"

#include "accel/fork.h"
#include "memory/process_barrier.h"

#include <algorithm>
#include <new>
#include <thread>

namespace accel::detail {

constinit thread_local BiasedThreadRecord* t_biased_record
    __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

// Set when the thread's record went back (its thread_local destructors ran):
// code that locks later in that thread's exit uses the inner mutex only.
constinit thread_local bool t_record_returned __attribute__((tls_model("initial-exec"))) =
    false;

// Records of exited threads, for the next new threads. Constant-initialised
// and trivially destructible, so it works at any point of the process's
// exit. Only thread start and exit touch it, so a spin lock guards it. That
// lock has no step before fork(): a `before` callback of the core or of a
// backend may take a device lock for the first time on the forking thread,
// which needs this pool. A fork child clears the lock instead, since the
// thread that held it did not survive. The list itself stays whole: at worst
// a record that thread was pushing is lost, or one it was taking is handed
// out again in the child, where that thread no longer runs.
struct RecordPool {
  std::atomic<bool> locked{false};
  BiasedThreadRecord* free = nullptr;
};
constinit RecordPool g_record_pool;

class RecordPoolLock {
 public:
  RecordPoolLock() noexcept {
    while (g_record_pool.locked.exchange(true, std::memory_order_acquire)) {
      std::this_thread::yield();
    }
  }
  ~RecordPoolLock() { g_record_pool.locked.store(false, std::memory_order_release); }
  RecordPoolLock(const RecordPoolLock&) = delete;
  RecordPoolLock& operator=(const RecordPoolLock&) = delete;
};

void clearRecordPoolLockInChild() noexcept {
  g_record_pool.locked.store(false, std::memory_order_relaxed);
}

// Registered when the library loads, through the core's one fork
// registration (fork.h), so that no lock is ever taken to register it.
const bool kRecordPoolForkCallback = [] {
  try {
    registerForkCallbacks({nullptr, nullptr, &clearRecordPoolLockInChild});
  } catch (...) {
    // Out of memory at load: a child forked while a thread was starting or
    // exiting could then wait on this lock, as on any mutex held at fork.
  }
  return true;
}();

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
    RecordPoolLock lock;
    record->next_free = g_record_pool.free;
    g_record_pool.free = record;
  }
};

// The calling thread's record, made (or taken from the pool) on first use;
// null when none can be had (out of memory, or the thread is exiting).
BiasedThreadRecord* recordOfThisThread() noexcept {
  if (BiasedThreadRecord* record = t_biased_record) return record;
  if (t_record_returned) return nullptr;
  BiasedThreadRecord* record = nullptr;
  {
    RecordPoolLock lock;
    record = g_record_pool.free;
    if (record != nullptr) g_record_pool.free = record->next_free;
  }
  if (record == nullptr) record = new (std::nothrow) BiasedThreadRecord;
  if (record == nullptr) return nullptr;
  record->next_free = nullptr;
  static thread_local RecordReturn give_back_at_exit;
  (void)give_back_at_exit;
  t_biased_record = record;
  return record;
}

void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits for the revoked owner to leave its critical section: spins briefly,
// then yields (the owner may hold the lock across a slow device allocation).
void waitUntilOutside(const BiasGrant& grant) noexcept {
  for (int spins = 0; grant.inside.load(std::memory_order_acquire); ++spins) {
    if (spins < 128) {
      cpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

bool BiasedMutex::biasSupported() noexcept { return processBarrierSupported(); }

BiasedMutex::~BiasedMutex() {
  while (grants_ != nullptr) {
    BiasGrant* next = grants_->next;
    delete grants_;
    grants_ = next;
  }
}

BiasGrant* BiasedMutex::grantFor(const BiasedThreadRecord* record) noexcept {
  for (BiasGrant* grant = grants_; grant != nullptr; grant = grant->next) {
    if (grant->owner == record) return grant;
  }
  auto* grant = new (std::nothrow) BiasGrant(record);
  if (grant == nullptr) return nullptr;
  grant->next = grants_;
  grants_ = grant;
  return grant;
}

void BiasedMutex::lockSlow() noexcept {
  mutex_.lock();
  const BiasedThreadRecord* me = recordOfThisThread();
  BiasGrant* current = bias_.load(std::memory_order_relaxed);
  if (current != nullptr && current->owner != me) {
    // Withdraw, then make sure the owner either saw that or is seen inside.
    bias_.store(nullptr, std::memory_order_seq_cst);
    processBarrier();
    waitUntilOutside(*current);
    // Shared: from now on the lock is its inner mutex (see the header).
    shared_ = true;
    last_ = nullptr;
    streak_ = 0;
    current = nullptr;
  }
  // This thread may own the bias and still come here (its record was just
  // made, or inherited): it holds the inner mutex, which is enough.
  if (me == nullptr || current != nullptr) return;
  if (me == last_) {
    streak_ = std::min(streak_ + 1, kGrantAfter);
  } else {
    last_ = me;
    streak_ = 1;
  }
  grant_on_unlock_ = !shared_ && streak_ >= kGrantAfter &&
                     allow_bias_.load(std::memory_order_relaxed) && biasSupported();
}

void BiasedMutex::lockKeepingBias() noexcept {
  mutex_.lock();
  BiasGrant* current = bias_.load(std::memory_order_relaxed);
  kept_grant_ = current;
  if (current == nullptr) return;
  // As lockSlow withdraws it, but the lock is not shared by this: the bias
  // goes back at the unlock, so the visit costs its owner nothing later.
  bias_.store(nullptr, std::memory_order_seq_cst);
  processBarrier();
  waitUntilOutside(*current);
}

void BiasedMutex::unlockKeepingBias(bool in_fork_child) noexcept {
  BiasGrant* grant = kept_grant_;
  kept_grant_ = nullptr;
  // In the child only the forking thread is left: a grant to any other
  // record would name a thread that no longer runs (harmless, but the lock
  // would stay on its slow path until another thread withdrew it).
  if (grant != nullptr && (!in_fork_child || grant->owner == t_biased_record))
    bias_.store(grant, std::memory_order_release);
  mutex_.unlock();
}

void BiasedMutex::unlockSlow() noexcept {
  if (grant_on_unlock_) {
    grant_on_unlock_ = false;
    // Release: a thread that loads the bias without the inner mutex reads
    // the grant's owner through it (the grant may have just been made).
    if (BiasGrant* grant = grantFor(last_)) bias_.store(grant, std::memory_order_release);
  }
  mutex_.unlock();
}

}  // namespace accel::detail
