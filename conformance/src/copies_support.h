// What the copies group's case files (copies_cases.cpp, copy_guarantee_cases.cpp)
// share: test bytes, the first difference between two ranges, device memory
// and reading it back through the copies themselves.
//
// Internal to accel_conformance.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "accel/hooks.h"
#include "conformance_case.h"

namespace accel::conformance::detail {

// Bytes that differ between positions and between seeds, so that a copy
// from the wrong offset or of the wrong round is seen. Made eight at a time:
// under ThreadSanitizer every store of the program is a call, and the
// copies group makes tens of MiB of these.
inline std::vector<unsigned char> pattern(std::size_t bytes, unsigned seed) {
  std::vector<unsigned char> out(bytes);
  const auto byteAt = [seed](std::size_t i) {
    return static_cast<unsigned char>((i * 2654435761u >> 7) + seed * 131u + i);
  };
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    unsigned char word[8];
    for (std::size_t k = 0; k < 8; ++k) word[k] = byteAt(i + k);
    std::memcpy(out.data() + i, word, 8);
  }
  for (; i < bytes; ++i) out[i] = byteAt(i);
  return out;
}

// Where the first difference is, for the message; -1 when equal. Compared
// by memcmp a page at a time, byte by byte only inside the page that
// differs: the sanitizers check a memcmp's range once, where a byte loop
// costs them a call per byte (most of the copies group's time under
// ThreadSanitizer).
inline long long firstDifference(const void* a, const void* b, std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  for (std::size_t at = 0; at < bytes; at += kPage) {
    const std::size_t end = std::min(bytes, at + kPage);
    if (std::memcmp(x + at, y + at, end - at) == 0) continue;
    for (std::size_t i = at; i < end; ++i) {
      if (x[i] != y[i]) return static_cast<long long>(i);
    }
  }
  return -1;
}

// Whether each of `bytes` bytes at `data` is `value`: the first is, and
// every byte equals the one after it (one memcmp, for the reason above).
inline bool allBytesAre(const void* data, std::size_t bytes, unsigned char value) {
  const auto* p = static_cast<const unsigned char*>(data);
  return bytes == 0 || (p[0] == value && std::memcmp(p, p + 1, bytes - 1) == 0);
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
