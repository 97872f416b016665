#include "accel/fork.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "hooks/fork_handlers.h"

namespace accel {
namespace {

// Constant-initialised: read in a fork child, written by getPinnedMemoryAllocator.
constinit std::atomic<const Allocator*> g_pinned_allocators[detail::kHooksTableSize] = {};

// Leaked: fork() may happen during static destruction.
struct ForkRegistry {
  std::mutex mutex;
  std::vector<ForkCallbacks> callbacks;
  // The core's own (registerCoreForkCallbacks): run right after the core's
  // stand-ins are prepared and before the backends' callbacks, and first
  // after the fork.
  std::vector<ForkCallbacks> core_callbacks;
};

ForkRegistry& forkRegistry() {
  static ForkRegistry* registry = new ForkRegistry();
  return *registry;
}

void runBefore() {
  ForkRegistry& r = forkRegistry();
  r.mutex.lock();  // released by the two after-handlers
  // The core first: preparing the stand-ins reads backends' probes, which
  // may need locks that the backends' own `before` callbacks take.
  detail::prepareBackendsForFork();
  // Then the core's locks (the caching allocators' device locks), before any
  // backend's: a thread holding a device lock may be waiting for a lock of
  // its backend's (a segment source's call), never the other way round.
  for (auto it = r.core_callbacks.rbegin(); it != r.core_callbacks.rend(); ++it) {
    if (it->before) it->before();
  }
  for (auto it = r.callbacks.rbegin(); it != r.callbacks.rend(); ++it) {
    if (it->before) it->before();
  }
}

void runAfterInParent() {
  ForkRegistry& r = forkRegistry();
  for (const ForkCallbacks& c : r.core_callbacks) {
    if (c.after_in_parent) c.after_in_parent();
  }
  for (const ForkCallbacks& c : r.callbacks) {
    if (c.after_in_parent) c.after_in_parent();
  }
  r.mutex.unlock();
}

void runAfterInChild() {
  ForkRegistry& r = forkRegistry();
  // Poisoned before any backend callback runs, so that a callback reaching
  // getHooks() for its own type already sees the stand-in.
  detail::poisonBackendsInChild();
  // The core's state next (the caching allocators usable again), so that a
  // backend's callback may free or allocate through them.
  for (const ForkCallbacks& c : r.core_callbacks) {
    if (c.after_in_child) c.after_in_child();
  }
  for (const ForkCallbacks& c : r.callbacks) {
    if (c.after_in_child) c.after_in_child();
  }
  r.mutex.unlock();
}

}  // namespace

void detail::throwForkRefusal(std::string_view what, std::string_view backend) {
  throw DeviceError(detail::concat(
      what, ": '", backend,
      "' was initialised before fork() (or its devices discovered before it); the child "
      "process (pid ",
      ::getpid(),
      ") cannot use it because the device's threads and state do not survive fork. "
      "Initialise '",
      backend,
      "' only after forking (importing accel touches no device), or start workers with "
      "fork+exec (spawn) instead of fork"));
}

void detail::notePinnedAllocator(DeviceType type, const Allocator& allocator) noexcept {
  std::atomic<const Allocator*>& slot =
      g_pinned_allocators[static_cast<std::uint8_t>(type)];
  if (slot.load(std::memory_order_relaxed) != &allocator)
    slot.store(&allocator, std::memory_order_release);
}

std::optional<DeviceType> detail::poisonedOwnerOf(const Allocator& allocator) noexcept {
  for (int i = 0; i < detail::kHooksTableSize; ++i) {
    if (g_pinned_allocators[i].load(std::memory_order_acquire) != &allocator) continue;
    const auto type = static_cast<DeviceType>(i);
    if (isPoisonedByFork(type)) return type;
  }
  return std::nullopt;
}

void detail::installForkHandlers() noexcept {
  static std::once_flag installed;
  try {
    std::call_once(installed, [] {
      ::pthread_atfork(&runBefore, &runAfterInParent, &runAfterInChild);
    });
  } catch (...) {
    // call_once fails only on a system error; without handlers a fork child
    // is not protected, which is the best that can be done then.
  }
}

void registerForkCallbacks(ForkCallbacks callbacks) {
  detail::installForkHandlers();
  ForkRegistry& r = forkRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.callbacks.push_back(callbacks);
}

void detail::registerCoreForkCallbacks(ForkCallbacks callbacks) {
  installForkHandlers();
  ForkRegistry& r = forkRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.core_callbacks.push_back(callbacks);
}

}  // namespace accel
