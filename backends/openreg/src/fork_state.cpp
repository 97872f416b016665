#include "fork_state.h"

#include <unistd.h>

#include <atomic>
#include <mutex>

#include "accel/error.h"
#include "accel/fork.h"

namespace accel::openreg::detail {
std::atomic<bool> g_forked_child{false};

namespace {

// Runs in the child right after fork(): a single store, nothing that locks.
void markForkedChild() noexcept { g_forked_child.store(true, std::memory_order_release); }

}  // namespace

void installForkHandler() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    // Through the core's one atfork registration, so that it runs after the
    // core has poisoned the hooks of initialised backends.
    try {
      registerForkCallbacks({.after_in_child = &markForkedChild});
    } catch (...) {
      // Only std::bad_alloc: without the flag a child fails later, in a
      // worker wait, instead of with a clear DeviceError.
    }
  });
}

void checkNotForkedChild(std::string_view what) {
  if (isForkedChild()) [[unlikely]] {
    throw DeviceError(accel::detail::concat(
        what, ": openreg was initialised before fork(); this child process (pid ",
        ::getpid(),
        ") cannot use it, because the simulated devices' worker threads do not "
        "survive fork. Initialise openreg after forking, or spawn workers with "
        "fork+exec"));
  }
}

}  // namespace accel::openreg::detail
