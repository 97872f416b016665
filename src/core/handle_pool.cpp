// The non-template parts of DeviceThreadHandlePool: exit detection, the
// main-thread test and the error messages (kept here so that every pool
// reports alike and the templates stay small).
#include "accel/handle_pool.h"

#include <cstdlib>

#include "accel/error.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace accel {

namespace detail {

// constinit and trivially destructible: readable by threads and handlers
// that run after static destruction.
constinit std::atomic<bool> g_handle_pools_exiting{false};

namespace {
void markHandlePoolsExiting() noexcept {
  g_handle_pools_exiting.store(true, std::memory_order_relaxed);
}
}  // namespace

void installHandlePoolExitHandler() noexcept {
  // Registered from libaccel.so, so it stays tied to the core library rather
  // than to a plugin that might be unloaded. Registering once per pool type is
  // harmless (the handler is idempotent) and puts the latest registration
  // after the latest library's first create(). If atexit fails (no room),
  // exit is only detected by the main-thread rule; nothing else changes.
  (void)std::atexit(markHandlePoolsExiting);
}

bool isMainThread() noexcept {
#if defined(__linux__)
  // On Linux the main thread's id equals the process id.
  return static_cast<pid_t>(::syscall(SYS_gettid)) == ::getpid();
#else
  return false;
#endif
}

void throwHandlePoolBadDevice(std::string_view pool, int device) {
  throw InvalidArgument(concat("reserving a handle from the '", pool,
                               "' pool: device index ", device, " is out of range [0, ",
                               kMaxDevicesPerType,
                               "); pass a device index such as the one "
                               "getHooks(type).getCurrentDevice() returns"));
}

void throwHandlePoolExiting(std::string_view pool, int device) {
  throw NotAvailable(concat(
      "reserving a handle from the '", pool, "' pool for device ", device,
      " after the process began to exit: handle pools hand out no handles during exit, "
      "because the library behind them may already be torn down; reserve handles "
      "before main returns and join threads that use them before exiting"));
}

void throwHandlePoolNullHandle(std::string_view pool, int device) {
  throw DeviceError(concat("creating a handle for the '", pool, "' pool on device ",
                           device,
                           " returned a null handle; the pool's create() must "
                           "return a valid handle or throw"));
}

}  // namespace detail

bool handlePoolsExiting() noexcept {
  return detail::g_handle_pools_exiting.load(std::memory_order_relaxed);
}

}  // namespace accel
