#include "accel/kit/config.h"

#include <cstdlib>

#include "accel/error.h"

namespace accel::kit {
namespace {

char lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<std::uint64_t> parseUnsigned(std::string_view text) noexcept {
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

std::uint64_t parseByteSize(std::string_view text, std::string_view what) {
  struct Unit {
    std::string_view suffix;
    std::uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"B", 1},
      {"KiB", std::uint64_t{1} << 10},
      {"MiB", std::uint64_t{1} << 20},
      {"GiB", std::uint64_t{1} << 30},
      {"TiB", std::uint64_t{1} << 40},
      {"kB", 1000ull},
      {"MB", 1000000ull},
      {"GB", 1000000000ull},
      {"TB", 1000000000000ull},
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::optional<std::uint64_t> value = parseUnsigned(text.substr(0, digits));
  const std::string_view suffix = text.substr(digits);
  std::uint64_t factor = suffix.empty() ? 1 : 0;
  for (const Unit& unit : kUnits) {
    if (equalsIgnoringCase(suffix, unit.suffix)) factor = unit.factor;
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
  while (unit < 6 && bytes / 1024 >= scale) {
    scale *= 1024;
    ++unit;
  }
  if (bytes % scale == 0) return detail::concat(bytes / scale, " ", kNames[unit]);
  // One decimal, rounded down: sizes in messages need not be exact.
  const auto tenths = static_cast<std::uint64_t>(
      static_cast<unsigned __int128>(bytes % scale) * 10 / scale);
  return detail::concat(bytes / scale, ".", tenths, " ", kNames[unit]);
}

ConfigReader::ConfigReader()
    : lookup_([](const char* name) { return std::getenv(name); }) {}

ConfigReader::ConfigReader(Lookup lookup) : lookup_(std::move(lookup)) {}

std::optional<std::string_view> ConfigReader::raw(const char* name) const noexcept {
  if (!lookup_) return std::nullopt;
  try {
    const char* value = lookup_(name);
    if (value == nullptr) return std::nullopt;
    return std::string_view(value);
  } catch (...) {
    return std::nullopt;  // a lookup that fails reads as unset
  }
}

std::uint64_t ConfigReader::count(const char* name, std::uint64_t fallback,
                                  std::uint64_t low, std::uint64_t high,
                                  std::string_view meaning) const {
  const std::optional<std::string_view> text = raw(name);
  if (!text) return fallback;
  const std::optional<std::uint64_t> value = parseUnsigned(*text);
  ACCEL_CHECK(value && *value >= low && *value <= high, InvalidArgument, name, "='",
              *text, "' is not ", meaning, ": use an integer from ", low, " to ", high,
              ", or unset the variable for the default (", fallback, ")");
  return *value;
}

std::uint64_t ConfigReader::byteSize(const char* name, std::uint64_t fallback,
                                     std::uint64_t low, std::uint64_t high) const {
  const std::optional<std::string_view> text = raw(name);
  if (!text) return fallback;
  const std::uint64_t bytes = parseByteSize(*text, name);
  ACCEL_CHECK(bytes >= low && bytes <= high, InvalidArgument, name, "='", *text, "' is ",
              formatByteSize(bytes), ": use a size from ", formatByteSize(low), " to ",
              formatByteSize(high), ", or unset the variable for the default (",
              formatByteSize(fallback), ")");
  return bytes;
}

bool ConfigReader::flag(const char* name, bool fallback) const {
  const std::optional<std::string_view> text = raw(name);
  if (!text) return fallback;
  for (std::string_view yes : {"1", "true", "yes", "on"}) {
    if (equalsIgnoringCase(*text, yes)) return true;
  }
  for (std::string_view no : {"0", "false", "no", "off"}) {
    if (equalsIgnoringCase(*text, no)) return false;
  }
  throw InvalidArgument(
      detail::concat(name, "='", *text,
                     "' is not a switch: use 1/0, true/false, yes/no or "
                     "on/off, or unset the variable for the default (",
                     fallback ? "on" : "off", ")"));
}

}  // namespace accel::kit
