// SimpleHooks: the smallest backend the plugin tests register from the test
// program itself (a backend already there when a plugin arrives, another
// thread's registration during a load): probes and a per-thread current
// device over a fixed number of pretend devices.
//
// Thread-safety: as AcceleratorHooks requires; the current device is per thread.
#pragma once

#include "accel/hooks.h"

namespace accel::plugtest {

class SimpleHooks final : public AcceleratorHooks {
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

}  // namespace accel::plugtest
