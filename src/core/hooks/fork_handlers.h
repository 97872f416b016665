// Internal: the core's part of the one pthread_atfork registration (fork.h).
//
// Around fork(), fork.cpp runs the core first and the backends' callbacks
// after it: before the fork the context gets the stand-ins of initialised
// backends ready (while every thread is alive and allocation is safe), and in
// the child the context swaps those backends for their stand-ins through the
// hooks table's own API, before any backend's after_in_child runs.
//
// Thread-safety: installForkHandlers is thread-safe and idempotent.
#pragma once

#include "accel/fork.h"

namespace accel::detail {

// For the core's modules (the caching allocator): callbacks that run, unlike
// registerForkCallbacks's, between the core's stand-in step and the
// backends' callbacks: `before` after the stand-ins are prepared and before
// every backend's `before` (so a lock taken here is outside every backend
// lock), the after-callbacks before every backend's (so a backend's
// after_in_child finds the core usable). Several run like the backends':
// `before` in reverse order of registration, the others in order. Throws
// only std::bad_alloc.
void registerCoreForkCallbacks(ForkCallbacks callbacks);

// Installs the process's pthread_atfork handlers (once).
void installForkHandlers() noexcept;

// Implemented by the context (context.cpp), called by the fork handlers.
void prepareBackendsForFork() noexcept;
void poisonBackendsInChild() noexcept;

}  // namespace accel::detail
