// SimpleHooks: the smallest backend the plugin tests need: probes and a
// per-thread current device over a fixed number of pretend devices.
//
// Thread-safety: as AcceleratorHooks requires; the current device is per thread.
#pragma once

#include <memory>
#include <string_view>

#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/registrar.h"

namespace accel::plugtest {

class SimpleHooks : public AcceleratorHooks {
 public:
  SimpleHooks(DeviceType type, int devices)
      : AcceleratorHooks(type, Capabilities{}), devices_(devices) {}

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return devices_ > 0; }
  int deviceCountImpl() const override { return devices_; }
  DeviceIndex getCurrentDeviceImpl() const override { return current(); }
  void setCurrentDeviceImpl(DeviceIndex index) override { current() = index; }

 private:
  static DeviceIndex& current() {
    thread_local DeviceIndex index = 0;
    return index;
  }
  int devices_;
};

// Registers a SimpleHooks backend under `name` into a plugin's registrar.
inline void registerSimpleBackend(Registrar& registrar, std::string_view name,
                                  int devices) {
  DeviceType type = registrar.registerDeviceType(name);
  registrar.registerHooks(std::make_unique<SimpleHooks>(type, devices));
}

}  // namespace accel::plugtest
