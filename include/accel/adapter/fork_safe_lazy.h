// ForkSafeLazy<T>: a value a plugin builds once, on first use, that a fork
// child never waits for. Part of the plugin adapter (accel/plugin_adapter.h):
// header-only, C++17, nothing of libaccel.so. The core's
// accel/kit/fork_safe_lazy.h is the same object for code in the core, settled
// through the core's fork callbacks; a plugin has its own (pthread_atfork).
//
// A function-local static (`static const T* x = build();`) is the usual way
// to build a driver's discovery state once. Its guard is the problem: if
// another thread is inside build() when the process forks, the child
// inherits a guard marked "in progress" that no thread will ever release,
// and its first call hangs for good. ForkSafeLazy keeps the same shape
// without that hazard:
//
//   constinit accel::adapter::ForkSafeLazy<Loader> g_loader;  // namespace scope
//   const Loader& l = g_loader.get<&openLoader, &loaderAbandonedByFork>();
//
// `Build` runs once, on the first caller's thread; other callers wait for
// it. `Abandoned` is run by that caller just before `Build` (in the parent,
// where allocating is safe): it makes what a fork child gets when the fork
// happened while `Build` ran on another thread (a value that says so). The
// plugin's child handler settles every such ForkSafeLazy with stores only. A
// fork before `Build` began leaves the child free to build its own.
//
// Both functions return a never-destroyed object and must not throw.
// Thread-safety: get() and peek() may be called from any thread; the fast
// path is one acquire load. Lifetime: constant-initialised and trivially
// destructible, so usable during static destruction and in a fork child.
#ifndef ACCEL_ADAPTER_FORK_SAFE_LAZY_H
#define ACCEL_ADAPTER_FORK_SAFE_LAZY_H

#include <pthread.h>

#include <atomic>
#include <thread>

#pragma GCC visibility push(hidden)

namespace accel::adapter {

class ForkSafeLazyBase {
 public:
  using Make = const void* (*)() noexcept;

 protected:
  constexpr ForkSafeLazyBase() noexcept = default;

  // Builds or waits; returns the value (or, in a fork child, the abandoned one).
  const void* getSlow(Make build, Make abandoned) noexcept {
    int expected = kNotStarted;
    if (state_.compare_exchange_strong(expected, kPreparing, std::memory_order_acq_rel)) {
      // A child may come back here (a fork while the parent prepared): it
      // keeps the abandoned value made then, and the list entry.
      if (!linked_.exchange(true, std::memory_order_acq_rel)) push(this);
      if (abandoned_.load(std::memory_order_acquire) == nullptr)
        abandoned_.store(abandoned(), std::memory_order_release);
      state_.store(kBuilding, std::memory_order_release);
      const void* value = build();
      value_.store(value, std::memory_order_release);
      state_.store(kDone, std::memory_order_release);
#if defined(__cpp_lib_atomic_wait)
      state_.notify_all();
#endif
      return value;
    }
    for (;;) {
      const int state = state_.load(std::memory_order_acquire);
      if (state == kDone) return value_.load(std::memory_order_acquire);
      if (state == kNotStarted) return getSlow(build, abandoned);  // a child's own build
#if defined(__cpp_lib_atomic_wait)
      state_.wait(state, std::memory_order_acquire);
#else
      std::this_thread::yield();  // C++17: no atomic wait; builds are rare and short
#endif
    }
  }

  std::atomic<const void*> value_{nullptr};

 private:
  enum : int { kNotStarted, kPreparing, kBuilding, kDone };

  // Every ForkSafeLazy of this plugin whose build began, for the child
  // handler; pushed once each, never removed (they are never destroyed).
  static std::atomic<ForkSafeLazyBase*>& head() noexcept {
    static std::atomic<ForkSafeLazyBase*> the_head{nullptr};  // constant-initialised
    return the_head;
  }
  static void push(ForkSafeLazyBase* lazy) noexcept {
    (void)kChildHandlerInstalled;  // installed when the plugin loaded
    ForkSafeLazyBase* old = head().load(std::memory_order_relaxed);
    do {
      lazy->next_ = old;
    } while (!head().compare_exchange_weak(old, lazy, std::memory_order_release,
                                           std::memory_order_relaxed));
  }
  // In the child, right after fork(): stores only. A build that was running
  // on another thread (gone in the child) gives its abandoned value; one that
  // was being prepared starts over.
  static void settleInChild() noexcept {
    for (ForkSafeLazyBase* lazy = head().load(std::memory_order_acquire); lazy != nullptr;
         lazy = lazy->next_) {
      const int state = lazy->state_.load(std::memory_order_acquire);
      if (state == kBuilding) {
        lazy->value_.store(lazy->abandoned_.load(std::memory_order_acquire),
                           std::memory_order_release);
        lazy->state_.store(kDone, std::memory_order_release);
      } else if (state == kPreparing) {
        lazy->state_.store(kNotStarted, std::memory_order_release);
      }
    }
  }

  // Installed when the plugin loads (its static initialisation), so that no
  // build can begin before a child would settle it.
  static inline const bool kChildHandlerInstalled =
      ::pthread_atfork(nullptr, nullptr, &ForkSafeLazyBase::settleInChild) == 0;

  std::atomic<int> state_{kNotStarted};
  std::atomic<const void*> abandoned_{nullptr};
  std::atomic<bool> linked_{false};
  ForkSafeLazyBase* next_ = nullptr;
};

template <typename T>
class ForkSafeLazy : public ForkSafeLazyBase {
 public:
  constexpr ForkSafeLazy() noexcept = default;

  template <const T* (*Build)() noexcept, const T* (*Abandoned)() noexcept>
  const T& get() noexcept {
    if (const void* v = value_.load(std::memory_order_acquire))
      return *static_cast<const T*>(v);
    return *static_cast<const T*>(getSlow(&erased<Build>, &erased<Abandoned>));
  }

  // The value if it is there (built, or abandoned by a fork), else null;
  // never builds and never waits.
  [[nodiscard]] const T* peek() const noexcept {
    return static_cast<const T*>(value_.load(std::memory_order_acquire));
  }

 private:
  template <const T* (*F)() noexcept>
  static const void* erased() noexcept {
    return F();
  }
};

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_FORK_SAFE_LAZY_H
