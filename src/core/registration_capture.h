// Internal: holding back static hooks registrations while a plugin loads.
//
// A plugin's static initialisers (ACCEL_REGISTER_HOOKS) run inside dlopen,
// before the loader has checked the plugin's API version. While a capture is
// active on the loading thread, HooksRegistration queues its factory here
// instead of registering it; the loader commits the queue after the version
// handshake succeeds and drops it otherwise, so code built against another
// API never runs.
//
// Thread-safety: the capture is per thread (the thread calling dlopen).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accel/hooks.h"
#include "accel/registry.h"

namespace accel::detail {

struct PendingHooksRegistration {
  std::string type_name;
  std::function<std::unique_ptr<AcceleratorHooks>()> factory;
  RegistryPriority priority;
};

// Starts queuing this thread's static registrations. Captures do not nest:
// a second begin on the same thread keeps the first queue.
void beginHooksRegistrationCapture() noexcept;
// Stops queuing and returns what was queued, in order.
std::vector<PendingHooksRegistration> endHooksRegistrationCapture() noexcept;

}  // namespace accel::detail
