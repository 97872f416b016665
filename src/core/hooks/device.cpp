#include "accel/device.h"

#include <cctype>
#include <charconv>
#include <ostream>

#include "accel/error.h"

namespace accel {
namespace {

[[noreturn]] void badDevice(std::string_view text, std::string_view why) {
  throw InvalidArgument(
      detail::concat("invalid device string '", text, "': ", why,
                     ". Expected 'type' or 'type:index' with a lower-case "
                     "type and a decimal index, e.g. 'openreg:1' or 'cpu'"));
}

}  // namespace

Device::Device(DeviceType type, DeviceIndex index) : type_(type), index_(index) {
  ACCEL_CHECK(index >= kCurrentDevice, InvalidArgument, "device index ", int(index),
              " for '", deviceTypeName(type),
              "' is negative; use -1 for the current device or 0..",
              kMaxDevicesPerType - 1);
}

Device Device::parse(std::string_view text) {
  if (text.empty()) badDevice(text, "it is empty");
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      badDevice(text, "it contains white space");
    }
  }
  auto colon = text.find(':');
  std::string_view type_text = text.substr(0, colon);
  if (type_text.empty()) badDevice(text, "the device type before ':' is missing");
  DeviceType type;
  try {
    type = deviceTypeFromName(type_text);
  } catch (const InvalidArgument& e) {
    // Hint with the whole corrected string, which the caller can paste.
    std::string lower(text);
    for (char& c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (findDeviceType(std::string_view(lower).substr(0, colon))) {
      badDevice(text,
                detail::concat("unknown device type '", type_text,
                               "': device type names are lower case (did you mean '",
                               lower, "'?)"));
    }
    badDevice(text, e.message());
  }
  if (colon == std::string_view::npos) return Device(type, kCurrentDevice);

  std::string_view index_text = text.substr(colon + 1);
  if (index_text.empty()) badDevice(text, "the index after ':' is missing");
  if (index_text[0] == '-') badDevice(text, "the index is negative");
  for (char c : index_text) {
    if (c < '0' || c > '9')
      badDevice(text,
                detail::concat("the index '", index_text, "' is not a decimal number"));
  }
  int value = 0;
  auto [end, ec] =
      std::from_chars(index_text.data(), index_text.data() + index_text.size(), value);
  if (ec != std::errc() || value >= kMaxDevicesPerType) {
    badDevice(text, detail::concat("the index ", index_text, " is out of range [0, ",
                                   kMaxDevicesPerType, ")"));
  }
  return Device(type, static_cast<DeviceIndex>(value));
}

std::string Device::str() const {
  std::string out(deviceTypeName(type_));
  if (hasIndex()) {
    out += ':';
    out += std::to_string(index_);
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const Device& device) {
  return out << device.str();
}

}  // namespace accel
