// ReserveCap: what a device may reserve (setMemoryLimit, setMemoryFraction).
//
// A cap of 0 bytes is kept apart from no cap: a fraction of 0 allows no
// allocation, and the fraction is kept to be named where an allocation
// fails (out_of_memory_report.h).
//
// Thread-safety: plain data; the owning DeviceCache's lock guards it.
#pragma once

#include <cstddef>
#include <optional>

namespace accel::memory::detail {

struct ReserveCap {
  bool capped = false;
  std::size_t bytes = 0;           // when capped
  std::optional<double> fraction;  // the fraction the cap was set as
  std::size_t fraction_of = 0;     // the capacity it was taken of
};

}  // namespace accel::memory::detail
