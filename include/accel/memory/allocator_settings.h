// AllocatorSettings: the tunables of the caching allocator, from code or from
// the ACCEL_ALLOC_CONF environment variable.
//
// ACCEL_ALLOC_CONF is a comma-separated list of key:value pairs with PyTorch's
// key names:
//   max_split_size_mb:N             blocks of at least N MiB are never split
//   garbage_collection_threshold:F  (0 < F < 1) when reserved memory passes F
//                                   of the limit, unused cached blocks are
//                                   freed before a new segment is allocated
//   roundup_power2_divisions:N      round requests to N steps per power of two
//                                   (N a power of two, at most 64)
//   expandable_segments:true|false  one growing segment per stream where the
//                                   backend can map pages (ignored elsewhere)
//   thread_caches:true|false        (ours; default true) each thread keeps the
//                                   blocks it frees for its next requests of
//                                   their size, without the device's lock
//   biased_lock:true|false          (ours; default true) a thread that takes
//                                   a device's lock alone takes it without an
//                                   atomic instruction until another does
// An unknown key, a missing colon or a bad value is an InvalidArgument naming
// the key, the value and what is accepted. The key table is written once, in
// allocator_settings.cpp; settingKeys() lists it.
//
// Thread-safety: plain value type and pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "accel/export.h"

namespace accel::memory {

struct AllocatorSettings {
  std::size_t max_split_size = 0;             // bytes; 0: unlimited
  double garbage_collection_threshold = 0.0;  // 0: off
  std::size_t roundup_power2_divisions = 0;   // 0: 512 B quantum only
  bool expandable_segments = false;
  bool thread_caches = true;  // docs/memory.md, "Thread caches"
  bool biased_lock = true;    // docs/memory.md, "The device lock"
  friend bool operator==(const AllocatorSettings&, const AllocatorSettings&) = default;
};

// Parses a configuration string (the format above) on top of `base`.
// Throws InvalidArgument naming the offending key or value.
[[nodiscard]] ACCEL_API AllocatorSettings
parseAllocatorSettings(std::string_view text, AllocatorSettings base = {});
// Parses the variable `variable` (default ACCEL_ALLOC_CONF); unset or empty
// gives the defaults. Throws InvalidArgument naming the variable and key.
[[nodiscard]] ACCEL_API AllocatorSettings
allocatorSettingsFromEnvironment(const char* variable = "ACCEL_ALLOC_CONF");
// The configuration string that parses back to `settings` (non-defaults only).
[[nodiscard]] ACCEL_API std::string formatAllocatorSettings(
    const AllocatorSettings& settings);
// The accepted keys, in documentation order.
[[nodiscard]] ACCEL_API std::vector<std::string_view> settingKeys();

}  // namespace accel::memory
