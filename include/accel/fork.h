// Fork callbacks: what a backend that holds state across fork() registers
// with the core, instead of installing its own pthread_atfork handlers.
//
// The core owns the one pthread_atfork registration of the process. Around a
// fork() it runs, in order:
//  - before:          in the parent, before the fork, in reverse order of
//                     registration (take the locks the child must find free);
//  - after_in_parent: in the parent, after the fork, in registration order;
//  - after_in_child:  in the child, single-threaded, in registration order,
//                     after the core has swapped every backend that had
//                     been discovered or had started initialising for its
//                     poisoned stand-in (so getHooks(type) in the child
//                     already refuses with the "initialised before fork"
//                     DeviceError).
// A callback must not throw (they are noexcept function pointers) and, in the
// child, should only do what is safe after fork() in a multi-threaded
// program: plain stores, releasing locks taken in `before`.
//
// Typical use: a backend whose own API bypasses the hooks (openreg's
// allocate/launch) sets a "forked child" flag in after_in_child and refuses
// its entry points there.
//
// Thread-safety: registerForkCallbacks is thread-safe; callbacks registered
// while a fork is in progress run from the next fork on.
// Lifetime: registrations are never removed (backends are never unloaded).
#pragma once

#include "accel/export.h"

namespace accel {

struct ForkCallbacks {
  void (*before)() noexcept = nullptr;
  void (*after_in_parent)() noexcept = nullptr;
  void (*after_in_child)() noexcept = nullptr;
};

// Registers the callbacks; null members are skipped. Throws only
// std::bad_alloc.
ACCEL_API void registerForkCallbacks(ForkCallbacks callbacks);

}  // namespace accel
