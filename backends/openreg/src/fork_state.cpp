#include "fork_state.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "types.h"

namespace accel::openreg::detail {
std::atomic<bool> g_forked_child{false};

namespace {

// Runs in the child right after fork(): a single store, nothing that locks.
void markForkedChild() noexcept { g_forked_child.store(true, std::memory_order_release); }

}  // namespace

void installForkHandler() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    // The plugin's own handler (it links nothing of the core); the core
    // refuses the hooks of initialised backends in a child by itself, and
    // this covers openreg's own API.
    (void)::pthread_atfork(nullptr, nullptr, &markForkedChild);
  });
}

void checkNotForkedChild(std::string_view what) {
  if (isForkedChild()) [[unlikely]] {
    throw DeviceError(
        concat(what, ": openreg was initialised before fork(); this child process (pid ",
               ::getpid(),
               ") cannot use it, because the simulated devices' worker threads do not "
               "survive fork. Initialise openreg after forking, or spawn workers with "
               "fork+exec"));
  }
}

}  // namespace accel::openreg::detail
