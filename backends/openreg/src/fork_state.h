// Whether this process is a fork() child of a process that had initialised
// openreg.
//
// The worker threads of the simulated devices do not survive fork(), so a
// child must not wait for them: every runtime entry point checks this flag
// first and throws DeviceError instead of hanging, and DataPtr deleters leak
// instead of taking locks a vanished thread may have held. (The core also
// swaps openreg's hooks for a poisoned object in the child; this covers the
// openreg API that bypasses the hooks.)
//
// Thread-safety: the flag is atomic; the handler is installed once.
#pragma once

#include <atomic>
#include <string_view>

namespace accel::openreg::detail {

// Installs (pthread_atfork) the after-fork child handler that sets the
// flag. Idempotent.
void installForkHandler() noexcept;

// Set once, in a fork child; read on hot paths (getDefaultGenerator), so the
// check is inline.
extern std::atomic<bool> g_forked_child;

// True in the child of a fork() made after installForkHandler().
[[nodiscard]] inline bool isForkedChild() noexcept {
  return g_forked_child.load(std::memory_order_acquire);
}

// Throws DeviceError, naming `what`, in a forked child.
void checkNotForkedChild(std::string_view what);

}  // namespace accel::openreg::detail
