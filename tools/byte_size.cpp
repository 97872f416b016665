#include "byte_size.h"

#include <charconv>
#include <limits>
#include <string>

#include "accel/error.h"

namespace accel::tool {
namespace {

struct Unit {
  std::string_view name;
  int shift;
};
constexpr Unit kUnits[] = {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}};

}  // namespace

std::size_t parseByteSize(std::string_view text, std::string_view option) {
  std::size_t number = 0;
  const char* end = text.data() + text.size();
  const auto [rest, ec] = std::from_chars(text.data(), end, number);
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  int shift = unit.empty() ? 0 : -1;
  for (const Unit& known : kUnits) {
    if (unit == known.name) shift = known.shift;
  }
  const bool fits =
      shift >= 0 && number <= (std::numeric_limits<std::size_t>::max() >> shift);
  ACCEL_CHECK(ec == std::errc() && rest != text.data() && fits && number > 0,
              InvalidArgument, option, " '", text,
              "' is not a size; write bytes or a whole number with B, KiB, MiB, GiB or "
              "TiB (e.g. 512MiB)");
  return number << shift;
}

std::string formatByteSize(std::size_t bytes) {
  for (const Unit& unit : kUnits) {
    const std::size_t scale = std::size_t{1} << unit.shift;
    if (unit.shift > 0 && bytes >= scale && bytes % scale == 0) {
      return std::to_string(bytes / scale) + ' ' + std::string(unit.name);
    }
  }
  return std::to_string(bytes) + " bytes";
}

}  // namespace accel::tool
