#include "registered_backend.h"

#include <pthread.h>

#include <atomic>

#include "openreg_backend.h"

namespace accel::openreg::detail {
namespace {

// Constant-initialised: no constructor runs, so the anchor is usable from
// the first call into the plugin, whatever the order of static
// initialisation.
std::atomic<OpenRegBackend*> g_registered_backend{nullptr};

// Runs in the child right after fork(): a load and a store, nothing that
// locks. The plugin installs its own handler (it links nothing of the core);
// the core refuses the hooks of started backends in a child by itself, and
// this covers a reference to the backend kept across the fork and openreg's
// own API.
void markForkedChild() noexcept {
  if (OpenRegBackend* backend = g_registered_backend.load(std::memory_order_acquire))
    backend->forkState().markChildIfStarted();
}

}  // namespace

void publishRegisteredBackend(OpenRegBackend& backend) noexcept {
  OpenRegBackend* none = nullptr;
  if (g_registered_backend.compare_exchange_strong(none, &backend,
                                                   std::memory_order_acq_rel)) {
    (void)::pthread_atfork(nullptr, nullptr, &markForkedChild);
  }
}

OpenRegBackend* registeredBackend() noexcept {
  return g_registered_backend.load(std::memory_order_acquire);
}

}  // namespace accel::openreg::detail
