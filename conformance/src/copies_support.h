// What the copies group's case files (copies_cases.cpp, copy_guarantee_cases.cpp)
// share: test bytes, the first difference between two ranges, device memory
// and reading it back through the copies themselves.
//
// Internal to accel_conformance.
#pragma once

#include <cstddef>
#include <vector>

#include "accel/hooks.h"
#include "conformance_case.h"

namespace accel::conformance::detail {

// Bytes that differ between positions and between seeds, so that a copy
// from the wrong offset or of the wrong round is seen.
inline std::vector<unsigned char> pattern(std::size_t bytes, unsigned seed) {
  std::vector<unsigned char> out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    out[i] = static_cast<unsigned char>((i * 2654435761u >> 7) + seed * 131u + i);
  }
  return out;
}

// Where the first difference is, for the message; -1 when equal.
inline long long firstDifference(const void* a, const void* b, std::size_t bytes) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  for (std::size_t i = 0; i < bytes; ++i) {
    if (x[i] != y[i]) return static_cast<long long>(i);
  }
  return -1;
}

inline DataPtr deviceMemory(AcceleratorHooks& hooks, int index, std::size_t bytes) {
  return hooks.getDeviceAllocator(DeviceIndex(index)).allocate(bytes);
}

// Reads `bytes` of device memory back to the host, through a pageable
// destination (done when the call returns).
inline std::vector<unsigned char> readBack(AcceleratorHooks& hooks, const void* src,
                                           std::size_t bytes, Stream stream) {
  std::vector<unsigned char> out(bytes, 0);
  hooks.copyDeviceToHost(out.data(), src, bytes, stream);
  return out;
}

// The cases of copy_guarantee_cases.cpp, which copiesCases() appends.
std::vector<ConformanceCase> copyGuaranteeCases();

}  // namespace accel::conformance::detail
