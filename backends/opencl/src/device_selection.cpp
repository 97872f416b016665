#include "device_selection.h"

#include <charconv>

#include "types.h"

namespace accel::opencl::detail {
namespace {

constexpr std::string_view kVariable = "ACCEL_OPENCL_DEVICES";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<int> index(std::string_view s) {
  int value = -1;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || error != std::errc{} || end != s.data() + s.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

DeviceSelection DeviceSelection::parse(std::string_view text) {
  DeviceSelection selection;
  if (trim(text).empty()) return selection;
  selection.use_default = false;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item == "gpu") {
      selection.gpu = true;
    } else if (item == "accelerator") {
      selection.accelerator = true;
    } else if (item == "cpu") {
      selection.cpu = true;
    } else if (item == "all") {
      selection.all = true;
    } else {
      const std::size_t colon = item.find(':');
      const std::optional<int> platform =
          colon == std::string_view::npos ? std::nullopt : index(item.substr(0, colon));
      const std::optional<int> device =
          colon == std::string_view::npos ? std::nullopt : index(item.substr(colon + 1));
      ACCEL_ADAPTER_CHECK(
          platform && device, InvalidArgument, kVariable, "='", text, "': '", item,
          "' is neither a device type (gpu, accelerator, cpu, all) nor "
          "platform:device indices such as 0:1; separate items with commas "
          "(`clinfo -l` lists the platforms and devices)");
      selection.indices.emplace_back(*platform, *device);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return selection;
}

bool DeviceSelection::selects(std::string_view kind, int platform,
                              int device) const noexcept {
  if (all) return true;
  if ((gpu && kind == "gpu") || (accelerator && kind == "accelerator") ||
      (cpu && kind == "cpu")) {
    return true;
  }
  for (const auto& [p, d] : indices) {
    if (p == platform && d == device) return true;
  }
  return false;
}

}  // namespace accel::opencl::detail
