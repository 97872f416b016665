// ForkSafeLazy<T>: a value built once, on first use, that a fork child never
// waits for.
//
// A function-local static (`static const T* x = build();`) is the usual way
// to build a backend's discovery state once. Its guard is the problem: if
// another thread is inside build() when the process forks, the child
// inherits a guard marked "in progress" that no thread will ever release,
// and its first call hangs for good. ForkSafeLazy keeps the same shape
// without that hazard:
//
//   constinit accel::kit::ForkSafeLazy<Loader> g_loader;
//   const Loader& l = g_loader.get<&openLoader, &loaderAbandonedByFork>();
//
// `Build` runs once, on the first caller's thread; other callers wait for
// it. `Abandoned` is run by that same caller just before `Build` (in the
// parent, where allocating is safe): it makes what a fork child gets when
// the fork happened while `Build` ran on another thread (a value that says
// so: "no devices: discovery was in progress when this process forked").
// The core's fork handler settles every such ForkSafeLazy in the child with
// stores only. A fork before `Build` began leaves the child free to build
// its own.
//
// Both functions return a never-destroyed object and must not throw.
// Thread-safety: get() and peek() may be called from any thread; the fast path is one
// acquire load. Lifetime: a ForkSafeLazy is constant-initialised and
// trivially destructible (make it constinit at namespace scope), so it is
// usable during static destruction and in a fork child.
#pragma once

#include <atomic>

#include "accel/export.h"

namespace accel::kit {

class ACCEL_API ForkSafeLazyBase {
 public:
  using Make = const void* (*)() noexcept;

 protected:
  constexpr ForkSafeLazyBase() noexcept = default;
  // Builds or waits; returns the value (or, in a fork child, the abandoned one).
  const void* getSlow(Make build, Make abandoned) noexcept;

  std::atomic<const void*> value_{nullptr};

 private:
  friend struct ForkSafeLazyRegistry;
  enum : int { kNotStarted, kPreparing, kBuilding, kDone };
  std::atomic<int> state_{kNotStarted};
  std::atomic<const void*> abandoned_{nullptr};
  std::atomic<bool> linked_{false};   // in the core's list of started ones
  ForkSafeLazyBase* next_ = nullptr;  // that list's link
};

template <typename T>
class ForkSafeLazy : public ForkSafeLazyBase {
 public:
  constexpr ForkSafeLazy() noexcept = default;

  template <const T* (*Build)() noexcept, const T* (*Abandoned)() noexcept>
  const T& get() noexcept {
    if (const void* v = value_.load(std::memory_order_acquire)) [[likely]]
      return *static_cast<const T*>(v);
    return *static_cast<const T*>(getSlow(&erased<Build>, &erased<Abandoned>));
  }

  // The value if it is there (built, or abandoned by a fork), else null;
  // never builds and never waits, for a caller that must not wait for a
  // Build that may hang.
  [[nodiscard]] const T* peek() const noexcept {
    return static_cast<const T*>(value_.load(std::memory_order_acquire));
  }

 private:
  template <const T* (*F)() noexcept>
  static const void* erased() noexcept {
    return F();
  }
};

}  // namespace accel::kit
