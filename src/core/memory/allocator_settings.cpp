#include "accel/memory/allocator_settings.h"

#include <array>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <string>

#include "accel/error.h"

namespace accel::memory {
namespace {

using Setter = void (*)(AllocatorSettings&, std::string_view key, std::string_view value);
using Getter = std::string (*)(const AllocatorSettings&);  // "" for the default

struct SettingKey {
  std::string_view key;
  std::string_view accepted;
  Setter set;
  Getter get;
};

[[noreturn]] void badValue(std::string_view key, std::string_view value,
                           std::string_view accepted) {
  throw InvalidArgument(accel::detail::concat(
      "allocator setting '", key, "': bad value '", value, "'; expected ", accepted));
}

std::size_t parseCount(std::string_view key, std::string_view value,
                       std::string_view accepted) {
  std::size_t out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size()) {
    badValue(key, value, accepted);
  }
  return out;
}

constexpr std::string_view kSplitAccepted = "a whole number of MiB, at least 20";
constexpr std::string_view kGcAccepted = "a fraction strictly between 0 and 1";
constexpr std::string_view kPow2Accepted = "a power of two from 1 to 64 (0: off)";
constexpr std::string_view kBoolAccepted = "true or false";

// A true/false key whose default is true (written only when false).
template <bool AllocatorSettings::*Field>
SettingKey onByDefault(std::string_view key) {
  return {key, kBoolAccepted,
          [](AllocatorSettings& s, std::string_view k, std::string_view v) {
            if (v == "true" || v == "True") {
              s.*Field = true;
            } else if (v == "false" || v == "False") {
              s.*Field = false;
            } else {
              badValue(k, v, kBoolAccepted);
            }
          },
          [](const AllocatorSettings& s) {
            return s.*Field ? std::string() : std::string("false");
          }};
}

const std::array<SettingKey, 6> kKeys{{
    {"max_split_size_mb", kSplitAccepted,
     [](AllocatorSettings& s, std::string_view k, std::string_view v) {
       const std::size_t mib = parseCount(k, v, kSplitAccepted);
       // Below 20 MiB every mid-size segment would count as oversize.
       if (mib < 20 || mib > (std::size_t{1} << 40)) badValue(k, v, kSplitAccepted);
       s.max_split_size = mib << 20;
     },
     [](const AllocatorSettings& s) {
       return s.max_split_size == 0 ? std::string()
                                    : std::to_string(s.max_split_size >> 20);
     }},
    {"garbage_collection_threshold", kGcAccepted,
     [](AllocatorSettings& s, std::string_view k, std::string_view v) {
       double out = 0;
       auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
       if (ec != std::errc() || end != v.data() + v.size() || !(out > 0.0 && out < 1.0)) {
         badValue(k, v, kGcAccepted);
       }
       s.garbage_collection_threshold = out;
     },
     [](const AllocatorSettings& s) {
       if (s.garbage_collection_threshold == 0.0) return std::string();
       // The shortest text that parses back to the same double.
       char text[32];
       const auto result =
           std::to_chars(text, text + sizeof text, s.garbage_collection_threshold);
       return std::string(text, result.ptr);
     }},
    {"roundup_power2_divisions", kPow2Accepted,
     [](AllocatorSettings& s, std::string_view k, std::string_view v) {
       const std::size_t n = parseCount(k, v, kPow2Accepted);
       if (n > 64 || (n != 0 && !std::has_single_bit(n))) badValue(k, v, kPow2Accepted);
       s.roundup_power2_divisions = n;
     },
     [](const AllocatorSettings& s) {
       return s.roundup_power2_divisions == 0
                  ? std::string()
                  : std::to_string(s.roundup_power2_divisions);
     }},
    {"expandable_segments", kBoolAccepted,
     [](AllocatorSettings& s, std::string_view k, std::string_view v) {
       if (v == "true" || v == "True") {
         s.expandable_segments = true;
       } else if (v == "false" || v == "False") {
         s.expandable_segments = false;
       } else {
         badValue(k, v, kBoolAccepted);
       }
     },
     [](const AllocatorSettings& s) {
       return s.expandable_segments ? std::string("true") : std::string();
     }},
    onByDefault<&AllocatorSettings::thread_caches>("thread_caches"),
    onByDefault<&AllocatorSettings::biased_lock>("biased_lock"),
}};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  return text;
}

std::string knownKeys() {
  std::string out;
  for (const SettingKey& key : kKeys) {
    if (!out.empty()) out += ", ";
    out += key.key;
  }
  return out;
}

}  // namespace

AllocatorSettings parseAllocatorSettings(std::string_view text, AllocatorSettings base) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      throw InvalidArgument(accel::detail::concat(
          "allocator setting '", item,
          "' has no value; write key:value (keys: ", knownKeys(), ")"));
    }
    const std::string_view key = trim(item.substr(0, colon));
    const std::string_view value = trim(item.substr(colon + 1));
    bool found = false;
    for (const SettingKey& entry : kKeys) {
      if (entry.key == key) {
        entry.set(base, key, value);
        found = true;
        break;
      }
    }
    if (!found) {
      throw InvalidArgument(accel::detail::concat("unknown allocator setting '", key,
                                                  "'; known keys: ", knownKeys()));
    }
  }
  return base;
}

AllocatorSettings allocatorSettingsFromEnvironment(const char* variable) {
  const char* text = std::getenv(variable);
  if (text == nullptr) return {};
  try {
    return parseAllocatorSettings(text);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(
        accel::detail::concat(variable, "='", text, "': ", error.message()));
  }
}

std::string formatAllocatorSettings(const AllocatorSettings& settings) {
  std::string out;
  for (const SettingKey& key : kKeys) {
    const std::string value = key.get(settings);
    if (value.empty()) continue;
    if (!out.empty()) out += ',';
    out.append(key.key).append(":").append(value);
  }
  return out;
}

std::vector<std::string_view> settingKeys() {
  std::vector<std::string_view> out;
  for (const SettingKey& key : kKeys) out.push_back(key.key);
  return out;
}

}  // namespace accel::memory
