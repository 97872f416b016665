// The openreg backend this plugin registered with its core: the plugin's one
// process-wide anchor.
//
// Two callers have no object to start from. openreg's extension interface
// (extension.h) is a set of exported functions that the program-side API
// calls without a handle (nothing of the core crosses it), and a
// pthread_atfork handler takes no argument. Both reach the backend that the
// plugin entry registered through this anchor; nothing else does, and
// nothing else of the plugin is reached this way (the backend hands each of
// its parts what it uses).
//
// The entry publishes the backend once the core accepted it: a backend the
// core refuses is destroyed and never published. Only the first accepted
// backend is published, and a later one (a second core in one process) is
// not: the extension keeps driving the one the program's API registered.
// Publishing also installs the after-fork child handler, once, which marks
// the published backend's ForkState.
//
// Thread-safety: publishRegisteredBackend runs on the thread that loads the
// plugin, before the core hands the backend to anyone; registeredBackend()
// is one acquire load, safe from any thread and in a fork child. Lifetime:
// the published backend is never destroyed (the adapter keeps a registered
// backend for the rest of the process).
#pragma once

namespace accel::openreg::detail {

class OpenRegBackend;

// Publishes `backend`, which the core has just accepted, unless one was
// published before; on the first publication installs the after-fork child
// handler. Never throws (a handler that cannot be installed leaves fork
// children to the core's poisoned hooks).
void publishRegisteredBackend(OpenRegBackend& backend) noexcept;

// The published backend; null until the plugin registered with a core.
// Never throws.
[[nodiscard]] OpenRegBackend* registeredBackend() noexcept;

}  // namespace accel::openreg::detail
