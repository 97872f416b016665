// Byte sizes the tests share. Test files of a group compile in unity batches
// (tests/CMakeLists.txt, accel_add_test_group), so a constant that several
// files use is defined here once and brought in with a using-declaration.
#pragma once

#include <cstddef>

namespace accel::testing {

inline constexpr std::size_t kKiB = std::size_t{1} << 10;
inline constexpr std::size_t kMiB = std::size_t{1} << 20;

}  // namespace accel::testing
