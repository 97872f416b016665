// DeviceSelection: which OpenCL devices the backend uses, parsed from
// ACCEL_OPENCL_DEVICES.
//
// The value is a comma-separated list of items, each either a device type
// (`gpu`, `accelerator`, `cpu`, `all`) or `platform:device` indices
// (`0:1`: device 1 of platform 0, in the order clGetPlatformIDs and
// clGetDeviceIDs(CL_DEVICE_TYPE_ALL) list them). A device is used when any
// item selects it; the backend numbers the used devices in platform, then
// device order. Unset or empty: GPUs and accelerators, and CPU devices only
// when there are neither (so pocl serves on a machine without a GPU).
//
// Thread-safety: a value type; parse is a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types.h"

namespace accel::opencl::detail {

struct DeviceSelection {
  // No items: the default rule above.
  bool use_default = true;
  bool gpu = false;
  bool accelerator = false;
  bool cpu = false;
  bool all = false;
  std::vector<std::pair<int, int>> indices;  // {platform, device}

  // Parses `text` (the variable's value). Throws InvalidArgument naming the
  // variable, the bad item and the accepted forms.
  static DeviceSelection parse(std::string_view text);

  // True if a device of kind `kind` ("gpu", "accelerator", "cpu", other) at
  // `platform:device` is selected explicitly. Never throws.
  [[nodiscard]] bool selects(std::string_view kind, int platform,
                             int device) const noexcept;
};

}  // namespace accel::opencl::detail
