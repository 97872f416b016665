#include "accel/device_type.h"

#include <array>
#include <atomic>
#include <cctype>
#include <mutex>
#include <ostream>
#include <string>

#include "accel/error.h"

namespace accel {
namespace {

constexpr std::array<std::string_view, kNumBuiltinDeviceTypes> kBuiltinNames = {
    "cpu", "cuda", "hip", "mps", "xpu", "mtia", "hpu"};

// Run-time names. A slot is written once, under the mutex, before the count
// that makes it visible is published; readers take no lock. The strings are
// never freed: a DeviceType may be printed during static destruction.
struct DeviceTypeNames {
  std::mutex mutex;
  std::array<std::atomic<const std::string*>, kMaxDeviceTypes> names{};
  std::atomic<int> count{kNumBuiltinDeviceTypes};
};

DeviceTypeNames& names() {
  static DeviceTypeNames* table = new DeviceTypeNames();
  return *table;
}

std::string lowerCase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string knownNamesList() { return joinDeviceTypeNames(allDeviceTypes()); }

}  // namespace

std::string explainBadDeviceTypeName(std::string_view name) {
  if (name.empty()) return "a device type name must not be empty";
  if (name.size() > kMaxDeviceTypeNameLength) {
    return detail::concat("device type name '", name, "' is ", name.size(),
                          " characters long; the limit is ", kMaxDeviceTypeNameLength);
  }
  if (!(name[0] >= 'a' && name[0] <= 'z')) {
    return detail::concat("device type name '", name,
                          "' must start with a lower-case letter (a-z)");
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) {
      return detail::concat("device type name '", name, "' contains '", c,
                            "'; only lower-case letters, digits and '_' are allowed");
    }
  }
  return {};
}

std::optional<DeviceType> findDeviceType(std::string_view name) noexcept {
  for (int i = 0; i < kNumBuiltinDeviceTypes; ++i) {
    if (kBuiltinNames[i] == name) return static_cast<DeviceType>(i);
  }
  DeviceTypeNames& table = names();
  int count = table.count.load(std::memory_order_acquire);
  for (int i = kNumBuiltinDeviceTypes; i < count; ++i) {
    const std::string* entry = table.names[i].load(std::memory_order_acquire);
    if (entry != nullptr && *entry == name) return static_cast<DeviceType>(i);
  }
  return std::nullopt;
}

DeviceType registerDeviceType(std::string_view name) {
  if (auto existing = findDeviceType(name)) return *existing;
  std::string problem = explainBadDeviceTypeName(name);
  ACCEL_CHECK(problem.empty(), InvalidArgument, "registerDeviceType: ", problem);
  DeviceTypeNames& table = names();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (auto existing = findDeviceType(name)) return *existing;  // lost a race
  int id = table.count.load(std::memory_order_relaxed);
  ACCEL_CHECK(id < kMaxDeviceTypes, InvalidArgument, "registerDeviceType('", name,
              "'): all ", kMaxDeviceTypes,
              " device type slots are taken; register fewer types (known: ",
              knownNamesList(), ")");
  table.names[id].store(new std::string(name), std::memory_order_release);
  table.count.store(id + 1, std::memory_order_release);
  return static_cast<DeviceType>(id);
}

DeviceType deviceTypeFromName(std::string_view name) {
  if (auto type = findDeviceType(name)) return *type;
  std::string lower = lowerCase(name);
  if (lower != name && findDeviceType(lower)) {
    throw InvalidArgument(detail::concat(
        "unknown device type '", name,
        "': device type names are lower case; did you mean '", lower, "'?"));
  }
  throw InvalidArgument(
      detail::concat("unknown device type '", name, "'; known types: ", knownNamesList(),
                     ". A backend registers its type when it loads: load "
                     "its plugin first (see docs/plugins.md)"));
}

std::string_view deviceTypeName(DeviceType type) noexcept {
  int id = toIndex(type);
  if (id < kNumBuiltinDeviceTypes) return kBuiltinNames[id];
  if (id >= kMaxDeviceTypes) return "unknown";
  const std::string* entry = names().names[id].load(std::memory_order_acquire);
  return entry == nullptr ? std::string_view("unknown") : std::string_view(*entry);
}

bool isValidDeviceType(DeviceType type) noexcept {
  int id = toIndex(type);
  return id < kNumBuiltinDeviceTypes ||
         (id < kMaxDeviceTypes &&
          names().names[id].load(std::memory_order_acquire) != nullptr);
}

std::vector<DeviceType> allDeviceTypes() {
  std::vector<DeviceType> out;
  int count = names().count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (isValidDeviceType(static_cast<DeviceType>(i)))
      out.push_back(static_cast<DeviceType>(i));
  }
  return out;
}

std::string joinDeviceTypeNames(const std::vector<DeviceType>& types,
                                std::string_view if_empty) {
  if (types.empty()) return std::string(if_empty);
  std::string out;
  for (DeviceType t : types) {
    if (!out.empty()) out += ", ";
    out += deviceTypeName(t);
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, DeviceType type) {
  return out << deviceTypeName(type);
}

}  // namespace accel
