#include "accel/openreg/config.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "accel/error.h"

namespace accel::openreg {
namespace {

constexpr const char* kDevicesVar = "ACCEL_OPENREG_DEVICES";
constexpr const char* kMemoryVar = "ACCEL_OPENREG_MEMORY";
constexpr const char* kUnitsVar = "ACCEL_OPENREG_EXECUTION_UNITS";
constexpr const char* kFailAllocVar = "ACCEL_OPENREG_FAIL_ALLOC";
constexpr const char* kLoseDeviceVar = "ACCEL_OPENREG_LOSE_DEVICE";
constexpr const char* kLatencyVar = "ACCEL_OPENREG_STREAM_LATENCY_US";

// Digits only (no sign, no spaces, no empty string); nullopt on overflow.
std::optional<std::uint64_t> parseUnsigned(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

std::uint64_t parseBoundedInteger(const char* var, std::string_view text,
                                  std::uint64_t low, std::uint64_t high,
                                  std::string_view meaning) {
  std::optional<std::uint64_t> value = parseUnsigned(text);
  ACCEL_CHECK(value && *value >= low && *value <= high, InvalidArgument, var, "='", text,
              "' is not ", meaning, ": use an integer from ", low, " to ", high,
              ", or unset the variable for the default");
  return *value;
}

std::vector<DeviceLossRule> parseLossRules(std::string_view text, int device_count) {
  std::vector<DeviceLossRule> rules;
  const auto bad = [&](std::string_view why) {
    throw InvalidArgument(detail::concat(
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
    if (colon == std::string_view::npos)
      bad(detail::concat("has no ':' in '", item, "'"));
    std::optional<std::uint64_t> device = parseUnsigned(item.substr(0, colon));
    std::optional<std::uint64_t> after = parseUnsigned(item.substr(colon + 1));
    if (!device || !after) bad(detail::concat("has a malformed entry '", item, "'"));
    if (*device >= static_cast<std::uint64_t>(device_count)) {
      bad(detail::concat("names device ", *device, ", but there are ", device_count,
                         " devices (", kDevicesVar, ")"));
    }
    rules.push_back({static_cast<DeviceIndex>(*device), *after});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return rules;
}

}  // namespace

std::uint64_t parseByteSize(std::string_view text, std::string_view what) {
  struct Unit {
    std::string_view suffix;
    std::uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"TiB", std::uint64_t{1} << 40},
      {"GiB", std::uint64_t{1} << 30},
      {"MiB", std::uint64_t{1} << 20},
      {"KiB", std::uint64_t{1} << 10},
      {"TB", 1000000000000ull},
      {"GB", 1000000000ull},
      {"MB", 1000000ull},
      {"kB", 1000ull},
      {"B", 1},
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string_view number = text.substr(0, digits);
  std::string_view suffix = text.substr(digits);
  std::optional<std::uint64_t> value = parseUnsigned(number);
  std::uint64_t factor = 0;
  if (suffix.empty()) {
    factor = 1;
  } else {
    for (const Unit& unit : kUnits) {
      if (equalsIgnoringCase(suffix, unit.suffix)) factor = unit.factor;
    }
  }
  const bool overflow =
      value && factor != 0 && *value > std::numeric_limits<std::uint64_t>::max() / factor;
  ACCEL_CHECK(value && factor != 0 && !overflow, InvalidArgument, what, "='", text,
              "' is not a size: write an integer with an optional unit, B, KiB, MiB, GiB "
              "or TiB (powers of 1024) or kB, MB, GB or TB (powers of 1000), e.g. "
              "\"512MiB\"");
  return *value * factor;
}

std::string formatByteSize(std::uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  std::uint64_t scale = 1;
  while (unit < 6 && bytes >= scale * 1024) {
    scale *= 1024;
    ++unit;
  }
  if (bytes % scale == 0) return detail::concat(bytes / scale, " ", kNames[unit]);
  // One decimal, rounded down: sizes in messages need not be exact.
  const std::uint64_t tenths = (bytes % scale) * 10 / scale;
  return detail::concat(bytes / scale, ".", tenths, " ", kNames[unit]);
}

Config parseConfig(const EnvironmentLookup& lookup) {
  Config config;
  const auto get = [&](const char* name) -> std::optional<std::string_view> {
    const char* value = lookup ? lookup(name) : nullptr;
    if (value == nullptr) return std::nullopt;
    return std::string_view(value);
  };
  if (auto text = get(kDevicesVar)) {
    config.device_count = static_cast<int>(
        parseBoundedInteger(kDevicesVar, *text, 0, kMaxDevicesPerType, "a device count"));
  }
  if (auto text = get(kMemoryVar)) {
    config.memory_bytes = parseByteSize(*text, kMemoryVar);
    ACCEL_CHECK(config.memory_bytes >= (std::uint64_t{1} << 20) &&
                    config.memory_bytes <= kMaxMemoryBytes,
                InvalidArgument, kMemoryVar, "='", *text, "' is ",
                formatByteSize(config.memory_bytes),
                ": the capacity per device must be from 1 MiB to ",
                formatByteSize(kMaxMemoryBytes));
  }
  if (auto text = get(kUnitsVar)) {
    config.execution_units = static_cast<int>(parseBoundedInteger(
        kUnitsVar, *text, 1, kMaxExecutionUnits, "a number of execution units"));
  }
  if (auto text = get(kFailAllocVar)) {
    config.fail_allocation = parseBoundedInteger(
        kFailAllocVar, *text, 1, std::numeric_limits<std::uint64_t>::max(),
        "an allocation number (1 = the first allocation)");
  }
  if (auto text = get(kLoseDeviceVar)) {
    config.lose_device = parseLossRules(*text, config.device_count);
  }
  if (auto text = get(kLatencyVar)) {
    config.stream_latency =
        std::chrono::microseconds(static_cast<std::int64_t>(parseBoundedInteger(
            kLatencyVar, *text, 0, 10'000'000, "a latency in microseconds")));
  }
  return config;
}

Config configFromEnvironment() {
  return parseConfig([](const char* name) { return std::getenv(name); });
}

}  // namespace accel::openreg
