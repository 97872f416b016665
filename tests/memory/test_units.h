// Sizes and streams that the memory tests share. The tests build one program
// in unity batches (tests/memory/CMakeLists.txt), so a helper two files use
// is declared here once and brought in with a using-declaration.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/device.h"
#include "accel/stream.h"
#include "support/sizes.h"

namespace accel::memory::testing {

using accel::testing::kKiB;
using accel::testing::kMiB;
inline constexpr std::int64_t MiB = std::int64_t{1} << 20;

// Stream `id` of CUDA device 0: the caching allocator's tests run on a
// FakeSegmentSource, and no backend is asked about the stream.
inline Stream stream(StreamId id) {
  return Stream(Device::unchecked(DeviceType::CUDA, 0), id);
}
inline Stream stream0() { return stream(0); }

}  // namespace accel::memory::testing
