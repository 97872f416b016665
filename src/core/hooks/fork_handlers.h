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

#include <optional>
#include <string_view>

#include "accel/allocator.h"
#include "accel/device_type.h"
#include "accel/fork.h"

namespace accel::detail {

// Throws the DeviceError a fork child gets from a backend that was
// initialised or discovered before the fork: "<what>: 'opencl' was
// initialised before fork() (or its devices discovered before it); the
// child process (pid 1234) cannot use it ...". One wording for the
// stand-in, a hooks reference kept across the fork and the allocators.
[[noreturn]] void throwForkRefusal(std::string_view what, std::string_view backend);

// The pinned allocator `type`'s hooks handed out (getPinnedMemoryAllocator
// records it), so that a fork child refuses allocations through it when
// `type` is poisoned. Lock-free; never throws.
void notePinnedAllocator(DeviceType type, const Allocator& allocator) noexcept;
// The poisoned type whose pinned allocator `allocator` is, if any (a fork
// child's check before its first allocation). Loads only; never throws.
std::optional<DeviceType> poisonedOwnerOf(const Allocator& allocator) noexcept;

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
