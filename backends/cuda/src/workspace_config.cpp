#include "workspace_config.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>

#include "accel/adapter/failure.h"

namespace accel::cuda::detail {
namespace {

[[noreturn]] void malformed(std::string_view text, std::string_view why) {
  throw adapter::InvalidArgument(
      "CUBLAS_WORKSPACE_CONFIG='" + std::string(text) + "' is malformed (" +
      std::string(why) +
      "); expected ':SIZE_KIB:COUNT' one or more times, e.g. ':4096:8'");
}

std::size_t number(std::string_view text, std::string_view part) {
  std::size_t value = 0;
  const auto [end, error] =
      std::from_chars(part.data(), part.data() + part.size(), value);
  if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
    malformed(text, "'" + std::string(part) + "' is not a whole number");
  }
  return value;
}

}  // namespace

std::size_t parseCublasWorkspaceConfig(std::string_view text) {
  if (text.empty() || text.front() != ':') malformed(text, "it must start with ':'");
  std::size_t total = 0;
  std::string_view rest = text.substr(1);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos) malformed(text, "a SIZE lacks its ':COUNT'");
    const std::size_t kib = number(text, rest.substr(0, colon));
    rest = rest.substr(colon + 1);
    const std::size_t next = rest.find(':');
    const std::size_t count = number(text, rest.substr(0, next));
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    if (next != std::string_view::npos && rest.empty()) malformed(text, "it ends in ':'");
    if (kib == 0 || count == 0) malformed(text, "sizes and counts must be positive");
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    if (kib > kMax / 1024 / count || total > kMax - kib * 1024 * count) {
      malformed(text, "the total overflows");
    }
    total += kib * 1024 * count;
  }
  return total;
}

std::size_t cublasWorkspaceBytes(int computeCapability) {
  if (const char* value = std::getenv("CUBLAS_WORKSPACE_CONFIG"); value != nullptr) {
    return parseCublasWorkspaceConfig(value);
  }
  return parseCublasWorkspaceConfig(computeCapability >= 90 ? kHopperWorkspaceConfig
                                                            : kDefaultWorkspaceConfig);
}

}  // namespace accel::cuda::detail
