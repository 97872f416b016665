#include "accel/kit/fork_safe_lazy.h"

#include "hooks/fork_handlers.h"

namespace accel::kit {

// Every ForkSafeLazy whose build began, for the fork child's callback: a
// lock-free list (pushed to by the first caller of each, walked by the child).
struct ForkSafeLazyRegistry {
  static constinit std::atomic<ForkSafeLazyBase*> head;

  static void push(ForkSafeLazyBase* lazy) noexcept {
    ForkSafeLazyBase* old = head.load(std::memory_order_relaxed);
    do {
      lazy->next_ = old;
    } while (!head.compare_exchange_weak(old, lazy, std::memory_order_release,
                                         std::memory_order_relaxed));
  }

  // In a fork child (single-threaded, stores only): a build that was
  // running on another thread will never finish here, so the child gets the
  // abandoned value; one still preparing had not touched the driver, so the
  // child may start its own.
  static void settleInChild() noexcept {
    for (ForkSafeLazyBase* lazy = head.load(std::memory_order_acquire); lazy != nullptr;
         lazy = lazy->next_) {
      const int state = lazy->state_.load(std::memory_order_acquire);
      if (state == ForkSafeLazyBase::kBuilding) {
        lazy->value_.store(lazy->abandoned_.load(std::memory_order_acquire),
                           std::memory_order_release);
        lazy->state_.store(ForkSafeLazyBase::kDone, std::memory_order_release);
      } else if (state == ForkSafeLazyBase::kPreparing) {
        lazy->state_.store(ForkSafeLazyBase::kNotStarted, std::memory_order_release);
      }
    }
  }
};

constinit std::atomic<ForkSafeLazyBase*> ForkSafeLazyRegistry::head{nullptr};

namespace {

// Registered when the library loads, through the core's fork registration,
// so that no lazy can reach its build before the child's callback exists: a
// flag set by a first build would let a second lazy's first user see it
// while the registration was still running, and a child forked then would
// find that lazy building with nothing to settle it.
const bool kChildCallbackRegistered = [] {
  try {
    accel::detail::registerCoreForkCallbacks(
        {.after_in_child = &ForkSafeLazyRegistry::settleInChild});
    return true;
  } catch (...) {
    // Out of memory at load: a child forked during a build would wait for
    // it, as with a function-local static. Nothing better can be done.
    return false;
  }
}();

}  // namespace

const void* ForkSafeLazyBase::getSlow(Make build, Make abandoned) noexcept {
  int expected = kNotStarted;
  if (state_.compare_exchange_strong(expected, kPreparing, std::memory_order_acq_rel)) {
    // A child may come back here (a fork while the parent prepared): it
    // keeps the abandoned value made then, and the list entry.
    if (!linked_.exchange(true, std::memory_order_acq_rel))
      ForkSafeLazyRegistry::push(this);
    if (abandoned_.load(std::memory_order_acquire) == nullptr)
      abandoned_.store(abandoned(), std::memory_order_release);
    state_.store(kBuilding, std::memory_order_release);
    const void* value = build();
    value_.store(value, std::memory_order_release);
    state_.store(kDone, std::memory_order_release);
    state_.notify_all();
    return value;
  }
  for (;;) {
    const int state = state_.load(std::memory_order_acquire);
    if (state == kDone) return value_.load(std::memory_order_acquire);
    if (state == kNotStarted) return getSlow(build, abandoned);  // a child's own build
    state_.wait(state, std::memory_order_acquire);
  }
}

}  // namespace accel::kit
