// BiasedMutex: a mutex that the thread which usually takes it takes without
// an atomic read-modify-write.
//
// Use it where one thread takes a lock far more often than the others and
// the lock's own cost is a large part of the critical section: the caching
// allocator's allocate/free pair (docs/memory.md, "The device lock"). Take it
// with a Guard, as a std::lock_guard:
//
//   BiasedMutex::Guard lock(mutex_);
//   ... // exclusive
//
// How: a thread that takes the lock through its inner std::mutex several
// times in a row is granted the bias. The owner of the bias then enters by
// storing "inside" into its grant (one object per thread and lock) and
// re-reading the bias (plain stores and loads, no locked instruction), and
// leaves by clearing that flag. Any other thread takes the inner mutex,
// withdraws the bias, runs membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) —
// which makes every running thread of the process execute a full memory
// barrier, so either the owner sees the withdrawal or the revoker sees the
// owner inside — and waits for the owner to leave (process_barrier.h). This
// is the asymmetric Dekker pattern of userspace RCU and hazard pointers: the
// rare side pays for both. A lock whose bias was withdrawn once is shared:
// it grants no bias again and stays its inner mutex. (Doubling the run a
// revoked thread needs, as before, still withdrew a bias on a large share of
// the calls of two threads on one device: 8.4 M pairs/s against 15.6 M/s for
// a plain mutex, docs/design-notes.md, "Two threads on one device: thread
// caches".) allowBias(false) stops
// new grants (ACCEL_ALLOC_CONF=biased_lock:false).
//
// The flag belongs to one thread and one lock (a BiasGrant), not to the lock
// alone and not to the thread alone. Per lock, a thread that has just been
// revoked may still be between its two reads, and its late "not inside"
// could clear the flag of the thread that owns the bias by then. Per
// thread, a thread inside one lock that takes and releases another would
// clear the flag the first lock's revoker waits on. A lock keeps its grants
// (one per thread record it ever granted) until it is destroyed and reuses
// a record's grant when that record wins it again, so a stale thread only
// ever writes its own grant. Thread records are never freed: a thread's
// record goes to a free list when the thread exits and the next new thread
// reuses it (inheriting the biases it had, which is sound: its previous user
// is gone and was not inside).
//
// Where membarrier cannot be registered (an old kernel, a seccomp filter), no
// bias is ever granted and the lock is its inner std::mutex.
//
// Thread-safety: lock from any thread, like std::mutex; a Guard is released
// on the thread that took it. Not recursive: taking it twice on one thread
// is undefined, as with std::mutex. Lifetime: a BiasedMutex must not be
// destroyed while held. In a fork child, a lock that a thread which did not
// survive the fork held (or was inside) stays held, as with std::mutex,
// unless the forking thread took it with lockKeepingBias (the caching
// allocator's fork handlers do, docs/lifecycle.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace accel::detail {

// A thread's identity for biased locks: one per thread that has taken a
// BiasedMutex through its inner mutex; never freed (see above).
struct BiasedThreadRecord {
  BiasedThreadRecord* next_free = nullptr;
};

// The bias of one lock for one thread record: owned by the lock. A cache
// line of its own: its owner writes `inside` at every lock and unlock, and
// the grants of two threads' locks made one after the other would share a
// line (the validation layer's lanes of its books, one per thread).
struct alignas(64) BiasGrant {
  explicit BiasGrant(const BiasedThreadRecord* grantee) noexcept : owner(grantee) {}
  const BiasedThreadRecord* const owner;
  std::atomic<bool> inside{false};  // the owner is in a critical section through it
  BiasGrant* next = nullptr;        // the lock's other grants
};

// The calling thread's record, or null before its first slow lock (and after
// its thread_local destructors ran). Initial-exec TLS: one %fs-relative load.
extern constinit thread_local BiasedThreadRecord* t_biased_record
    __attribute__((tls_model("initial-exec")));

class BiasedMutex {
 public:
  BiasedMutex() = default;
  ~BiasedMutex();
  BiasedMutex(const BiasedMutex&) = delete;
  BiasedMutex& operator=(const BiasedMutex&) = delete;

  // Holds the lock from construction to destruction or unlock(). Never
  // throws (the inner mutex's lock is taken as std::lock_guard would).
  class Guard {
   public:
    explicit Guard(BiasedMutex& mutex) noexcept
        : owner_(&mutex), mutex_(&mutex), grant_(mutex.lock()) {}
    ~Guard() { unlock(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    // Releases early (before calling out, say); later calls and the
    // destructor do nothing.
    void unlock() noexcept {
      if (mutex_ == nullptr) return;
      mutex_->unlock(grant_);
      mutex_ = nullptr;
    }
    // Takes the lock again after unlock() (a call out that must not hold
    // it, then back); does nothing while held.
    void relock() noexcept {
      if (mutex_ != nullptr) return;
      grant_ = owner_->lock();
      mutex_ = owner_;
    }
    // True when the lock was taken through the bias (tests, benchmarks).
    [[nodiscard]] bool biased() const noexcept { return grant_ != nullptr; }

   private:
    BiasedMutex* owner_;
    BiasedMutex* mutex_;  // null once unlocked
    BiasGrant* grant_;
  };

  // Returns the grant the lock was taken through, or null when it was taken
  // through the inner mutex; pass it to unlock().
  // Inline everywhere (always_inline: some callers' compilers kept it a
  // call, a third of the cost of the lock it takes).
  [[nodiscard, gnu::always_inline]] BiasGrant* lock() noexcept {
    const BiasedThreadRecord* me = t_biased_record;
    // Acquire: the grant was made by the thread that granted it (a plain
    // load on x86 all the same).
    BiasGrant* grant = bias_.load(std::memory_order_acquire);
    if (grant != nullptr && grant->owner == me) {
      grant->inside.store(true, std::memory_order_relaxed);
      // Only the compiler must keep the store before the load: a revoker's
      // membarrier orders them on the processor.
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (bias_.load(std::memory_order_relaxed) == grant) [[likely]]
        return grant;
      grant->inside.store(false, std::memory_order_release);  // withdrawn meanwhile
    }
    lockSlow();
    return nullptr;
  }
  [[gnu::always_inline]] void unlock(BiasGrant* grant) noexcept {
    if (grant != nullptr) [[likely]] {
      grant->inside.store(false, std::memory_order_release);
      return;
    }
    unlockSlow();
  }

  // The thread record that owns the bias, for tests: null when none does.
  [[nodiscard]] const BiasedThreadRecord* biasOwner() const noexcept {
    const BiasGrant* grant = bias_.load(std::memory_order_acquire);
    return grant != nullptr ? grant->owner : nullptr;
  }
  // True if this process can grant biases (membarrier registered). Never throws.
  [[nodiscard]] static bool biasSupported() noexcept;

  // Whether a bias may be granted from now on (true at first). A bias already
  // granted lasts until another thread takes the lock. Thread-safe.
  void allowBias(bool allowed) noexcept {
    allow_bias_.store(allowed, std::memory_order_relaxed);
  }
  // True once a bias was withdrawn: the lock grants none again.
  [[nodiscard]] bool shared() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return shared_;
  }

  // For a thread that takes the lock seldom and must not cost its owner the
  // bias: around fork() (the caching allocator's fork handlers), or a visit
  // to every thread's lane of the validation layer's books. lockKeepingBias
  // takes the inner mutex and withdraws the bias, waiting for its owner to
  // leave (a process-wide barrier when a bias is withdrawn), without making
  // the lock shared; unlockKeepingBias gives the bias back (in a fork child
  // only to the forking thread, the one left) and unlocks. Same thread, in
  // that order; no other lock()/unlock() of this lock by it in between.
  void lockKeepingBias() noexcept;
  void unlockKeepingBias(bool in_fork_child = false) noexcept;

  // Consecutive slow locks by one thread before it is granted the bias.
  static constexpr std::uint32_t kGrantAfter = 4;

 private:
  void lockSlow() noexcept;
  void unlockSlow() noexcept;
  // This lock's grant for `record`, made on first use; null when out of memory.
  BiasGrant* grantFor(const BiasedThreadRecord* record) noexcept;

  std::atomic<BiasGrant*> bias_{nullptr};
  std::atomic<bool> allow_bias_{true};
  mutable std::mutex mutex_;
  // Guarded by mutex_: every grant made (freed with the lock), who took the
  // lock last, how many times in a row, and whether it was ever shared.
  BiasGrant* grants_ = nullptr;
  const BiasedThreadRecord* last_ = nullptr;
  std::uint32_t streak_ = 0;
  bool shared_ = false;
  bool grant_on_unlock_ = false;
  BiasGrant* kept_grant_ = nullptr;  // the bias lockKeepingBias withdrew
};

}  // namespace accel::detail
