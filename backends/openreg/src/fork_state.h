// ForkState: whether this process is a fork() child of one in which the
// openreg backend had been initialised.
//
// The worker threads of the simulated devices do not survive fork(), so a
// child must not wait for them: the parts that reach a device check this
// first and throw DeviceError instead of hanging, and event destruction
// leaks instead of taking locks a vanished thread may have held. (The core
// also swaps openreg's hooks for a poisoned object in the child; this covers
// a reference to the backend kept across fork() and openreg's own API,
// which reaches the backend through its extension interface.)
//
// The backend owns one and hands it, read-only, to the parts that check it.
// The after-fork child handler (registered_backend.cpp, which installs it
// once for the backend the plugin registered) calls markChildIfStarted.
//
// Thread-safety: all members are thread-safe (atomics); markChildIfStarted
// runs in the child right after fork() and takes no lock.
#pragma once

#include <atomic>
#include <string_view>

namespace accel::openreg::detail {

class ForkState {
 public:
  // The backend's init succeeded: a fork from now on leaves a child that
  // must not use openreg. Never throws.
  void markStarted() noexcept { started_.store(true, std::memory_order_release); }
  // In a fork child: remembers that it is one if the parent had started
  // openreg. A load and a store, nothing that locks.
  void markChildIfStarted() noexcept {
    if (started_.load(std::memory_order_acquire))
      child_.store(true, std::memory_order_release);
  }

  // True in the child of a fork() made after markStarted(). Read on every
  // hook call, so inline. Never throws.
  [[nodiscard]] bool inChild() const noexcept {
    return child_.load(std::memory_order_acquire);
  }
  // Throws DeviceError, naming `what`, in such a child.
  void check(std::string_view what) const {
    if (inChild()) [[unlikely]]
      throwForkedChild(what);
  }

 private:
  [[noreturn]] static void throwForkedChild(std::string_view what);

  std::atomic<bool> started_{false};
  std::atomic<bool> child_{false};
};

}  // namespace accel::openreg::detail
