// Context: the process-wide entry point a framework asks about devices.
//
// globalContext() dispatches by DeviceType to the registered hooks, and adds
// what the hooks alone do not: the plugin autoload before the first
// initialisation, seeding every initialised backend at once, the choice of
// "the" accelerator, and fork safety (a backend whose initialisation began
// before fork() is poisoned in the child, see docs/lifecycle.md). Calls go
// down only: backends never call the context.
//
// Thread-safety: every member is thread-safe.
// Lifetime: created on first use and never destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include "accel/allocator.h"
#include "accel/device.h"
#include "accel/export.h"
#include "accel/generator.h"
#include "accel/hooks.h"

namespace accel {

namespace detail {
// Per device type, the hooks once Context::lazyInitDevice succeeded for it
// (null before, and in a fork child for a poisoned type). Installed hooks
// never move, so one acquire load tells the inline fast paths below both that
// the type is ready and where its hooks are. Constant-initialised and never
// destroyed: readable during static initialisation and exit. Written only by
// the context.
inline constexpr int kContextReadySlots = 256;  // every DeviceType value
ACCEL_API extern std::atomic<AcceleratorHooks*> g_context_ready[kContextReadySlots];
}  // namespace detail

class ACCEL_API Context {
 public:
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Runs the plugin autoload (once per process, autoloadPlugins()) and then
  // the backend's init(), which the hooks base runs once per hooks object:
  // concurrent callers wait for the first; if init throws, that caller gets
  // the error and the next caller (a waiting one included) tries again.
  // Throws NotAvailable when no backend is registered for `type`, and
  // whatever init throws; InvalidArgument when called from the backend's own
  // initImpl for its own type. After fork(), in the child, a type whose
  // initialisation had begun in the parent throws DeviceError. After the
  // first success: one acquire load.
  void lazyInitDevice(DeviceType type);
  // True once the backend is initialised (through the context or its first
  // hook call); false in a fork child for a type poisoned there. Never throws.
  [[nodiscard]] bool isInitialized(DeviceType type) const noexcept;

  // The default generator of `device` (index -1 = current device), after
  // initialising its backend. CPU has a built-in generator of its own. On an
  // initialised backend the context's part is one acquire load. Returns a
  // reference valid for the rest of the process: the CPU generator and every
  // backend's default generators are never destroyed (see
  // AcceleratorHooks::getDefaultGenerator). Throws what the backend's
  // initialisation and getDefaultGenerator throw; InvalidArgument for cpu:1.
  [[nodiscard]] const Generator& defaultGenerator(Device device) {
    // Inline, like PyTorch's: an initialised backend costs one acquire load
    // here and the hooks' inline check, with no call into libaccel.so.
    if (device.type() != DeviceType::CPU) [[likely]] {
      AcceleratorHooks* hooks =
          detail::g_context_ready[static_cast<std::uint8_t>(device.type())].load(
              std::memory_order_acquire);
      if (hooks != nullptr) [[likely]]
        return hooks->getDefaultGenerator(device.index());
    }
    return defaultGeneratorSlow(device);
  }
  // Seeds the CPU generator and every default generator of every device of
  // every initialised backend. Throws what a backend throws (after seeding
  // the others).
  void manualSeed(std::uint64_t seed);

  // The device of `ptr` in backend `type` (initialised first). Throws
  // InvalidArgument for memory the backend does not own.
  [[nodiscard]] Device getDeviceFromPtr(const void* ptr, DeviceType type);
  // True if ptr is pinned host memory of `type` (default: the current
  // accelerator). False, without asking the backend, while the type is not
  // initialised: nothing can be pinned by a backend that never started.
  [[nodiscard]] bool isPinnedPtr(
      const void* ptr, std::optional<DeviceType> type = std::nullopt) const noexcept;
  // Pinned host allocator of `type` (default: the current accelerator),
  // initialising it first. Throws NotAvailable when there is no accelerator.
  [[nodiscard]] Allocator& getPinnedMemoryAllocator(
      std::optional<DeviceType> type = std::nullopt);

  // The accelerator programs should use, the same in every host whatever the
  // order its plugins loaded in (docs/design-notes.md): the one set with
  // setCurrentAccelerator; else the one ACCEL_ACCELERATOR names (read once)
  // when that type is registered, available or not; else the first available
  // registered backend in the order cuda, hip, xpu, mps, mtia, hpu, then
  // run-time types by name, simulated ones (openreg) last. nullopt when none
  // is available. Never throws. Allocates nothing and takes no lock unless a
  // backend was registered since the last call; asks each candidate's
  // isAvailable() on every call, as availability may change.
  [[nodiscard]] std::optional<DeviceType> currentAccelerator() const noexcept;
  // Throws InvalidArgument for CPU or an unregistered type.
  void setCurrentAccelerator(DeviceType type);
  // Forgets an explicit choice.
  void clearCurrentAccelerator() noexcept;

 private:
  friend ACCEL_API Context& globalContext() noexcept;
  Context();
  // defaultGenerator for CPU and for a backend not initialised yet.
  const Generator& defaultGeneratorSlow(Device device);
};

ACCEL_API Context& globalContext() noexcept;

// True in a child process whose parent had discovered or initialised `type`
// before fork(). Thread-safe; never throws.
ACCEL_API bool isPoisonedByFork(DeviceType type) noexcept;

// For a backend's own objects that bypass the hooks and the core's caches
// (an allocator of its own): throws the DeviceError every refused hook
// throws in a fork child ("<what>: 'mydev' was initialised before fork() ...")
// when `type` is poisoned; does nothing otherwise. Thread-safe.
ACCEL_API void refuseIfPoisonedByFork(DeviceType type, std::string_view what);

}  // namespace accel
