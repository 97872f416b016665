// Internal: the names of an enum's values, written once as a table that the
// value indexes.
//
// The public name functions (hookGroupName, fillPathName, pluginStatusName,
// traceActionName, ...) each read one of these tables instead of spelling a
// switch of their own:
//
//   constexpr detail::EnumNames<FillPath::Avx512> kFillPathNames{
//       "auto", "scalar", "avx2", "avx512"};
//   std::string_view fillPathName(FillPath path) noexcept { return kFillPathNames[path];
//   }
//
// The template argument is the enum's last enumerator, and the table takes
// exactly one name for each value up to it, in declaration order: a table
// with a name missing or one too many does not compile. What it cannot see is
// an enumerator added after the one named, so whoever adds one moves the
// template argument to it (the enum's header says so where it matters). A
// value outside the table (an integer cast to the enum) reads "unknown".
//
// Thread-safety: constant data; reading it is thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace accel::detail {

template <auto kLast>
requires std::is_enum_v<decltype(kLast)>
class EnumNames {
 public:
  using Enum = decltype(kLast);
  // Enumerators from the first (value 0) to kLast, without gaps.
  static constexpr std::size_t kCount = static_cast<std::size_t>(kLast) + 1;

  template <typename... Names>
  requires(sizeof...(Names) == kCount) consteval explicit EnumNames(Names... names)
      : names_{std::string_view(names)...} {}

  // The name of `value`; "unknown" for a value no enumerator has. Never throws.
  [[nodiscard]] constexpr std::string_view operator[](Enum value) const noexcept {
    const auto index = static_cast<std::size_t>(value);
    return index < kCount ? names_[index] : std::string_view("unknown");
  }

 private:
  std::array<std::string_view, kCount> names_;
};

}  // namespace accel::detail
