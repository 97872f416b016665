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

#include <string_view>

namespace accel::openreg::detail {

// Registers (accel::registerForkCallbacks) the after-fork child callback
// that sets the flag. Idempotent.
void installForkHandler() noexcept;

// True in the child of a fork() made after installForkHandler().
[[nodiscard]] bool isForkedChild() noexcept;

// Throws DeviceError, naming `what`, in a forked child.
void checkNotForkedChild(std::string_view what);

}  // namespace accel::openreg::detail
