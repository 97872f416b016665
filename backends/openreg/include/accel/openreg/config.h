// Config: the knobs of the simulated devices, read from the environment.
//
// init() reads the environment (again on each attempt, until one succeeds);
// the configuration it succeeded with stays for the life of the process. The
// probes (deviceCount, isAvailable) answer from that configuration, or,
// before init, from one reading of the environment made at the first probe.
// A malformed value makes init() throw InvalidArgument naming the variable,
// the value and the accepted form, while the probes answer 0/false.
//
//   ACCEL_OPENREG_DEVICES            number of devices, 0 to 128 (default 2)
//   ACCEL_OPENREG_MEMORY             capacity per device, e.g. "512MiB" (the default)
//   ACCEL_OPENREG_EXECUTION_UNITS    operations a device runs at once, 1 to 64 (4)
//   ACCEL_OPENREG_FAIL_ALLOC         N: the N-th allocation (1-based) is OutOfMemory
//   ACCEL_OPENREG_LOSE_DEVICE        "D:N[,D:N...]": device D lost after N operations
//   ACCEL_OPENREG_STREAM_LATENCY_US  delay before each operation of every stream
//
// Sizes are a decimal integer with an optional unit: B, KiB, MiB, GiB, TiB
// (powers of 1024) or kB, MB, GB, TB (powers of 1000), e.g. "64MiB", "1GB",
// "4096". Units are case-insensitive; no spaces, signs or fractions.
//
// Thread-safety: the parsing functions are pure and thread-safe;
// configFromEnvironment() reads the environment (getenv) and must not race
// with setenv.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device.h"
#include "accel/kit/config.h"
#include "accel/openreg/export.h"

namespace accel::openreg {

inline constexpr int kDefaultDeviceCount = 2;
inline constexpr std::uint64_t kDefaultMemoryBytes = std::uint64_t{512} << 20;
inline constexpr int kDefaultExecutionUnits = 4;
inline constexpr int kMaxExecutionUnits = 64;
// Per device; keeps the reserved address range of 128 devices within reach.
inline constexpr std::uint64_t kMaxMemoryBytes = std::uint64_t{1} << 40;

struct DeviceLossRule {
  DeviceIndex device = 0;
  std::uint64_t after_operations = 0;
  friend bool operator==(const DeviceLossRule&, const DeviceLossRule&) = default;
};

struct Config {
  int device_count = kDefaultDeviceCount;
  std::uint64_t memory_bytes = kDefaultMemoryBytes;
  int execution_units = kDefaultExecutionUnits;
  std::uint64_t fail_allocation = 0;  // 0: no allocation fails
  std::vector<DeviceLossRule> lose_device;
  std::chrono::microseconds stream_latency{0};
};

// Returns the value of an environment variable, or nullptr when unset.
using EnvironmentLookup = std::function<const char*(const char* name)>;

// Builds a Config from `lookup` (unset variables keep their defaults), with
// the kit's ConfigReader. Throws InvalidArgument naming the first malformed
// variable, its value and the form expected, e.g. "ACCEL_OPENREG_DEVICES='two'
// is not a device count: use an integer from 0 to 128, or unset the variable
// for the default (2)".
ACCEL_OPENREG_API Config parseConfig(const EnvironmentLookup& lookup);

// parseConfig over the process environment. Throws as parseConfig does.
ACCEL_OPENREG_API Config configFromEnvironment();

// The size parser and formatter are the backend kit's (accel/kit/config.h),
// named here too because openreg's API used them first.
using kit::formatByteSize;
using kit::parseByteSize;

}  // namespace accel::openreg
