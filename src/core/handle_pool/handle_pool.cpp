// The non-template parts of DeviceThreadHandlePool: exit detection, the
// main-thread test and the error messages (kept here so that every pool
// reports alike and the templates stay small).
#include "accel/handle_pool.h"

#include <pthread.h>

#include <cstdlib>

#include "accel/error.h"
#include "accel/fork.h"
#include "accel/hook_catalogue.h"

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

namespace {

// The main thread's pthread_t, once known; a thread exit then costs a
// pthread_self() compare instead of two system calls (gettid, getpid).
constinit std::atomic<bool> g_main_thread_known{false};
constinit std::atomic<pthread_t> g_main_thread{};

bool isMainThreadBySyscall() noexcept {
#if defined(__linux__)
  // On Linux the main thread's id equals the process id.
  return static_cast<pid_t>(::syscall(SYS_gettid)) == ::getpid();
#else
  return false;
#endif
}

void rememberMainThread() noexcept {
  g_main_thread.store(::pthread_self(), std::memory_order_relaxed);
  g_main_thread_known.store(true, std::memory_order_release);
}

// In a fork child the forking thread is the main thread (its tid is the
// child's pid).
void rememberMainThreadInChild() noexcept { rememberMainThread(); }

// libaccel.so's static initialisers run on the main thread when the program
// links it (the usual case). When it is dlopened from another thread the
// main thread stays unknown and isMainThread falls back to the system calls.
[[maybe_unused]] const bool g_main_thread_recorded = [] {
  if (isMainThreadBySyscall()) rememberMainThread();
  try {
    registerForkCallbacks({nullptr, nullptr, &rememberMainThreadInChild});
  } catch (...) {
    // Out of memory at start-up: after a fork the syscall fallback is not
    // taken, so forget the main thread rather than keep the parent's.
    g_main_thread_known.store(false, std::memory_order_relaxed);
  }
  return true;
}();

}  // namespace

bool isMainThread() noexcept {
  if (g_main_thread_known.load(std::memory_order_acquire)) [[likely]] {
    return ::pthread_equal(::pthread_self(),
                           g_main_thread.load(std::memory_order_relaxed));
  }
  return isMainThreadBySyscall();
}

void throwHandlePoolBadDevice(std::string_view pool, int device) {
  throw InvalidArgument(concat("reserving a handle from the '", pool,
                               "' pool: device index ", device, " is out of range [0, ",
                               kMaxDevicesPerType,
                               "); pass a device index such as the one getHooks(type).",
                               hookInfo(HookId::getCurrentDevice).name, "() returns"));
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
