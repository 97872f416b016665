// Internal: hooks that stand in for a backend which cannot be used.
//
// Two objects take a backend's place in the table: the absent hooks (nothing
// registered for the type) and the poisoned hooks (the backend was
// initialised before fork(), and this is the child). Both answer the probes
// benignly, from fixed values, and refuse every other hook through
// failUnsupported, which each overrides with its own explanation. An index
// error would mislead there, so it is routed to failUnsupported too. They
// can never initialise: init() and every hook that would initialise refuse
// through failUnsupported, naming the hook that was called.
//
// Thread-safety: immutable after construction.
#pragma once

#include <exception>

#include "accel/hooks.h"

namespace accel::detail {

class RefusingHooks : public AcceleratorHooks {
 public:
  RefusingHooks(DeviceType type, Capabilities capabilities, bool built, int device_count)
      : AcceleratorHooks(type, capabilities), built_(built), device_count_(device_count) {
    refuseInitialization();
  }

 protected:
  [[noreturn]] void failBadDeviceIndex(DeviceIndex, int, HookId hook) const final {
    failUnsupported(hook);
    std::terminate();  // unreachable: failUnsupported throws (a virtual call is not
                       // trusted)
  }

  bool isBuiltImpl() const final { return built_; }
  bool isAvailableImpl() const final { return false; }
  int deviceCountImpl() const final { return device_count_; }
  bool hasPrimaryContextImpl(DeviceIndex) const final { return false; }
  bool isPinnedPtrImpl(const void*) const final { return false; }

 private:
  bool built_;
  int device_count_;
};

}  // namespace accel::detail
