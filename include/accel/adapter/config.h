// Settings from the environment, for a plugin: unsigned counts, byte sizes
// ("512MiB") and switches, each checked against its range with a message
// that names the variable, the value and what to write instead. Part of the
// plugin adapter (accel/plugin_adapter.h): header-only, C++17. The core's
// accel/kit/config.h is the same reader, throwing the library's errors.
//
// Thread-safety: plain functions; a ConfigReader is as thread-safe as its
// lookup. Errors: InvalidArgument (accel/adapter/failure.h).
#ifndef ACCEL_ADAPTER_CONFIG_H
#define ACCEL_ADAPTER_CONFIG_H

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "accel/adapter/failure.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

namespace detail {

inline bool equalsIgnoringCase(std::string_view a, std::string_view b) noexcept {
  const auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace detail

// A decimal number without sign or spaces; nullopt if malformed or past
// 2^64 - 1.
[[nodiscard]] inline std::optional<std::uint64_t> parseUnsigned(
    std::string_view text) noexcept {
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

// "512MiB", "4GB", "1048576": an integer with an optional unit (B, KiB,
// MiB, GiB, TiB in powers of 1024; kB, MB, GB, TB in powers of 1000; any
// case). Throws InvalidArgument naming `what` otherwise.
[[nodiscard]] inline std::uint64_t parseByteSize(std::string_view text,
                                                 std::string_view what = "size") {
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
    if (detail::equalsIgnoringCase(suffix, unit.suffix)) factor = unit.factor;
  }
  const bool overflow =
      value && factor != 0 && *value > std::numeric_limits<std::uint64_t>::max() / factor;
  ACCEL_ADAPTER_CHECK(
      value && factor != 0 && !overflow, InvalidArgument, what, "='", text,
      "' is not a size: write an integer with an optional unit, B, KiB, MiB, GiB "
      "or TiB (powers of 1024) or kB, MB, GB or TB (powers of 1000), e.g. "
      "\"512MiB\"");
  return *value * factor;
}

// "512 MiB", "1.5 GiB" (one decimal, rounded down).
[[nodiscard]] inline std::string formatByteSize(std::uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  std::uint64_t scale = 1;
  while (unit < 6 && bytes / 1024 >= scale) {
    scale *= 1024;
    ++unit;
  }
  if (bytes % scale == 0) return concat(bytes / scale, " ", kNames[unit]);
  // One decimal, rounded down: sizes in messages need not be exact. The
  // remainder is below scale <= 2^60, so ten times it fits in 64 bits.
  const std::uint64_t tenths = bytes % scale * 10 / scale;
  return concat(bytes / scale, ".", tenths, " ", kNames[unit]);
}

// Reads settings through a lookup (the environment by default). A variable
// that is unset, or a lookup that throws, gives the fallback; one that is
// set to something malformed or out of range throws InvalidArgument.
class ConfigReader {
 public:
  using Lookup = std::function<const char*(const char* name)>;
  ConfigReader() : lookup_([](const char* name) { return std::getenv(name); }) {}
  explicit ConfigReader(Lookup lookup) : lookup_(std::move(lookup)) {}

  // The variable's text, or nullopt when unset. Never throws.
  [[nodiscard]] std::optional<std::string_view> raw(const char* name) const noexcept {
    return rawFrom(lookup_, name);
  }
  // raw() through `lookup`, for a reader that keeps its lookup elsewhere.
  [[nodiscard]] static std::optional<std::string_view> rawFrom(
      const Lookup& lookup, const char* name) noexcept {
    if (!lookup) return std::nullopt;
    try {
      const char* value = lookup(name);
      if (value == nullptr) return std::nullopt;
      return std::string_view(value);
    } catch (...) {
      return std::nullopt;  // a lookup that fails reads as unset
    }
  }
  // An integer in [low, high]; `meaning` says what it counts.
  [[nodiscard]] std::uint64_t count(const char* name, std::uint64_t fallback,
                                    std::uint64_t low, std::uint64_t high,
                                    std::string_view meaning = "a count") const {
    const std::optional<std::string_view> text = raw(name);
    if (!text) return fallback;
    const std::optional<std::uint64_t> value = parseUnsigned(*text);
    ACCEL_ADAPTER_CHECK(value && *value >= low && *value <= high, InvalidArgument, name,
                        "='", *text, "' is not ", meaning, ": use an integer from ", low,
                        " to ", high, ", or unset the variable for the default (",
                        fallback, ")");
    return *value;
  }
  // A byte size (parseByteSize) in [low, high].
  [[nodiscard]] std::uint64_t byteSize(
      const char* name, std::uint64_t fallback, std::uint64_t low = 0,
      std::uint64_t high = std::numeric_limits<std::uint64_t>::max()) const {
    const std::optional<std::string_view> text = raw(name);
    if (!text) return fallback;
    const std::uint64_t bytes = parseByteSize(*text, name);
    ACCEL_ADAPTER_CHECK(bytes >= low && bytes <= high, InvalidArgument, name, "='", *text,
                        "' is ", formatByteSize(bytes), ": use a size from ",
                        formatByteSize(low), " to ", formatByteSize(high),
                        ", or unset the variable for the default (",
                        formatByteSize(fallback), ")");
    return bytes;
  }
  // 1/0, true/false, yes/no, on/off (any case).
  [[nodiscard]] bool flag(const char* name, bool fallback) const {
    const std::optional<std::string_view> text = raw(name);
    if (!text) return fallback;
    for (std::string_view yes : {"1", "true", "yes", "on"}) {
      if (detail::equalsIgnoringCase(*text, yes)) return true;
    }
    for (std::string_view no : {"0", "false", "no", "off"}) {
      if (detail::equalsIgnoringCase(*text, no)) return false;
    }
    throw InvalidArgument(concat(name, "='", *text,
                                 "' is not a switch: use 1/0, true/false, yes/no or "
                                 "on/off, or unset the variable for the default (",
                                 fallback ? "on" : "off", ")"));
  }

 private:
  Lookup lookup_;
};

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_CONFIG_H
