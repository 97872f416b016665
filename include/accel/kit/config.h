// Config: reading a backend's settings from environment variables.
//
// A backend reads its knobs (device count, memory per device, switches) from
// variables such as ACCEL_OPENREG_DEVICES. Every backend needs the same few
// parsers and the same kind of error, so they live here: a malformed value is
// an InvalidArgument that names the variable, quotes the value and states the
// form expected ("ACCEL_OPENREG_DEVICES='abc' is not a device count: use an
// integer from 0 to 128, or unset the variable for the default").
//
//   accel::kit::ConfigReader env;                     // the process environment
//   int devices = env.count("ACCEL_MYDEV_DEVICES", 2, 0, 8, "a device count");
//   std::uint64_t bytes = env.byteSize("ACCEL_MYDEV_MEMORY", 1 << 30);
//   bool trace = env.flag("ACCEL_MYDEV_TRACE", false);
//
// Text forms:
//  - counts: decimal digits only (no sign, spaces or empty text);
//  - sizes: a decimal integer with an optional unit, B, KiB, MiB, GiB, TiB
//    (powers of 1024) or kB, MB, GB, TB (powers of 1000), case-insensitive:
//    "4096", "512MiB", "2GiB", "1GB";
//  - flags: 1/0, true/false, yes/no, on/off, case-insensitive.
//
// Thread-safety: the parse functions are pure. A ConfigReader over the process
// environment calls getenv(), which must not race with setenv(); one over a
// lookup function is as thread-safe as that function.
// Lifetime: ConfigReader holds its lookup function by value.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "accel/export.h"

namespace accel::kit {

// Digits only; nullopt for anything else or on overflow. Never throws.
[[nodiscard]] ACCEL_API std::optional<std::uint64_t> parseUnsigned(
    std::string_view text) noexcept;

// A size as described above ("512MiB" -> 536870912). Throws InvalidArgument
// naming `what` (e.g. the variable), the text and the accepted forms.
[[nodiscard]] ACCEL_API std::uint64_t parseByteSize(std::string_view text,
                                                    std::string_view what = "size");

// "512 MiB", "1.5 GiB", "100 B" (one decimal, rounded down), for messages.
// Throws only std::bad_alloc.
[[nodiscard]] ACCEL_API std::string formatByteSize(std::uint64_t bytes);

class ACCEL_API ConfigReader {
 public:
  // Returns a variable's value, or nullptr when it is unset.
  using Lookup = std::function<const char*(const char* name)>;

  // Reads the process environment.
  ConfigReader();
  // Reads through `lookup` (tests, or settings that come from elsewhere). An
  // empty function reads as "every variable unset".
  explicit ConfigReader(Lookup lookup);

  // The raw value, or nullopt when unset. Never throws.
  [[nodiscard]] std::optional<std::string_view> raw(const char* name) const noexcept;

  // An integer in [low, high], or `fallback` when unset. Throws
  // InvalidArgument naming the variable, the value, `meaning` ("a device
  // count") and the range.
  [[nodiscard]] std::uint64_t count(const char* name, std::uint64_t fallback,
                                    std::uint64_t low, std::uint64_t high,
                                    std::string_view meaning = "a count") const;

  // A size in [low, high] bytes, or `fallback` when unset. Throws
  // InvalidArgument for malformed text or a size outside the range, naming
  // the variable, the value and the accepted forms.
  [[nodiscard]] std::uint64_t byteSize(
      const char* name, std::uint64_t fallback, std::uint64_t low = 0,
      std::uint64_t high = std::numeric_limits<std::uint64_t>::max()) const;

  // A switch, or `fallback` when unset. Throws InvalidArgument naming the
  // variable, the value and the accepted words.
  [[nodiscard]] bool flag(const char* name, bool fallback) const;

 private:
  Lookup lookup_;
};

}  // namespace accel::kit
