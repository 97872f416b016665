// Devices: the OpenCL devices the backend uses, found on first use.
//
// Discovery (no context is created): open the loader (loader.h), list every
// platform and every device of each, keep those that ACCEL_OPENCL_DEVICES
// selects (device_selection.h) and that have OpenCL >= 2.0 with coarse-grain
// SVM (the backend's memory is SVM). The reason for 0 devices is kept in
// words: no loader, no platform, no device with SVM, excluded by selection.
// A malformed ACCEL_OPENCL_DEVICES leaves 0 devices and `selection_error`,
// which init() throws (the probes stay quiet, as the contract asks).
//
// Each device's context is created on first use (deviceContext) and never
// released: queues, programs and SVM memory hang off it, and may be used
// until the process ends.
//
// Thread-safety: devices() is thread-safe (discovery runs once); the records
// are immutable after it, apart from the context, created once under a
// std::call_once. Lifetime: never destroyed.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/opencl/device_info.h"
#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

struct DeviceRecord {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  DeviceInfo info;
  // Created by deviceContext(); null until then.
  std::once_flag context_once;
  std::atomic<cl_context> context{nullptr};
};

struct Devices {
  std::vector<std::unique_ptr<DeviceRecord>> used;
  std::string reason;           // why `used` is empty; empty otherwise
  std::string skipped;          // devices seen and not used, a line each
  std::string selection_error;  // a malformed ACCEL_OPENCL_DEVICES, for init()

  [[nodiscard]] int count() const noexcept { return static_cast<int>(used.size()); }
  [[nodiscard]] bool available() const noexcept { return !used.empty(); }
};

// Discovered on first use. Never throws (failures become the reason).
const Devices& devices() noexcept;

// Throws NotAvailable with the reason unless devices were found.
void requireAvailable();

// The record of used device `index` (checked: InvalidArgument out of range,
// NotAvailable without devices).
DeviceRecord& deviceRecord(DeviceIndex index);

// The device's context, created on first call. Throws DeviceError when
// clCreateContext fails.
cl_context deviceContext(DeviceIndex index);
// True once deviceContext(index) succeeded; false for any bad index. Never
// throws.
bool hasContext(DeviceIndex index) noexcept;

}  // namespace accel::opencl::detail
