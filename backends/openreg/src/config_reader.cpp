#include "config_reader.h"

#include <limits>
#include <optional>

#include "accel/adapter/config.h"
#include "types.h"

namespace accel::openreg::detail {
namespace {

constexpr const char* kDevicesVar = "ACCEL_OPENREG_DEVICES";
constexpr const char* kMemoryVar = "ACCEL_OPENREG_MEMORY";
constexpr const char* kUnitsVar = "ACCEL_OPENREG_EXECUTION_UNITS";
constexpr const char* kFailAllocVar = "ACCEL_OPENREG_FAIL_ALLOC";
constexpr const char* kLoseDeviceVar = "ACCEL_OPENREG_LOSE_DEVICE";
constexpr const char* kLatencyVar = "ACCEL_OPENREG_STREAM_LATENCY_US";

std::vector<DeviceLossRule> parseLossRules(std::string_view text, int device_count) {
  std::vector<DeviceLossRule> rules;
  const auto bad = [&](std::string_view why) {
    throw InvalidArgument(concat(
        kLoseDeviceVar, "='", text, "' ", why,
        ": use a comma-separated list of DEVICE:OPERATIONS, e.g. \"1:100\" (openreg:1 is "
        "lost after 100 operations)"));
  };
  if (text.empty()) bad("is empty");
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) bad(concat("has no ':' in '", item, "'"));
    std::optional<std::uint64_t> device = adapter::parseUnsigned(item.substr(0, colon));
    std::optional<std::uint64_t> after = adapter::parseUnsigned(item.substr(colon + 1));
    if (!device || !after) bad(concat("has a malformed entry '", item, "'"));
    if (*device >= static_cast<std::uint64_t>(device_count)) {
      bad(concat("names device ", *device, ", but there are ", device_count, " devices (",
                 kDevicesVar, ")"));
    }
    rules.push_back({static_cast<accel::DeviceIndex>(*device), *after});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return rules;
}

}  // namespace

Config readConfig(const EnvironmentLookup& lookup) {
  const adapter::ConfigReader env(lookup);
  Config config;
  config.device_count = static_cast<int>(env.count(kDevicesVar, kDefaultDeviceCount, 0,
                                                   kMaxDevicesPerType, "a device count"));
  config.memory_bytes = env.byteSize(kMemoryVar, kDefaultMemoryBytes,
                                     std::uint64_t{1} << 20, kMaxMemoryBytes);
  config.execution_units =
      static_cast<int>(env.count(kUnitsVar, kDefaultExecutionUnits, 1, kMaxExecutionUnits,
                                 "a number of execution units"));
  config.fail_allocation =
      env.count(kFailAllocVar, 0, 1, std::numeric_limits<std::uint64_t>::max(),
                "an allocation number (1 = the first allocation)");
  if (std::optional<std::string_view> text = env.raw(kLoseDeviceVar)) {
    config.lose_device = parseLossRules(*text, config.device_count);
  }
  config.stream_latency = std::chrono::microseconds(static_cast<std::int64_t>(
      env.count(kLatencyVar, 0, 0, 10'000'000, "a latency in microseconds")));
  return config;
}

}  // namespace accel::openreg::detail
