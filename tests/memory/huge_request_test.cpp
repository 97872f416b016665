// Requests too large for any device: refused as OutOfMemory before a size is
// rounded or a segment asked for, counted in num_ooms, whatever the settings.
// (A request within 2 MiB of 2^64 used to round to a 0-byte segment that the
// allocator handed out as if it had succeeded.)
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/size_rules.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;

using testing::kMiB;
constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

using testing::stream0;

TEST(HugeRequest, IsOutOfMemoryCountedAndAsksTheDeviceForNothingUnderEverySetting) {
  // Sizes whose 2 MiB segment rounding wraps to 0 (2^64 - 2 MiB, 2^64 - 512],
  // whose 512 B rounding wraps, and the first beyond the largest request.
  const std::vector<std::size_t> sizes{kMax,
                                       kMax - 511,
                                       kMax - kMiB,
                                       kMax - 2 * kMiB + 2,
                                       kMaxRequest + 1,
                                       std::size_t{1} << 63};
  for (const char* text : {"", "roundup_power2_divisions:4", "expandable_segments:true",
                           "max_split_size_mb:64", "garbage_collection_threshold:0.5"}) {
    SCOPED_TRACE(text);
    FakeSegmentSource source(std::size_t{1} << 30, false, 2 * kMiB);
    CachingAllocator allocator(DeviceType::CUDA, 1, source, parseAllocatorSettings(text));
    DataPtr small = allocator.allocate(0, 1000, stream0());
    for (std::size_t bytes : sizes) {
      SCOPED_TRACE(bytes);
      EXPECT_THROW((void)allocator.allocate(0, bytes, stream0()), OutOfMemory);
    }
    const MemoryStats stats = allocator.stats(0);
    EXPECT_EQ(stats.num_ooms, static_cast<std::int64_t>(sizes.size()));
    EXPECT_EQ(stats.num_device_alloc, 1);  // the small segment only
    EXPECT_EQ(stats.allocated_bytes.current, 1024);
    // The cache still works, and the small block is untouched.
    DataPtr large = allocator.allocate(0, 30 * kMiB, stream0());
    EXPECT_NE(large.get(), small.get());
  }
}

TEST(HugeRequest, TheLargestRequestRoundsAndSegmentsWithoutWrapping) {
  for (std::size_t divisions : {0u, 2u, 4u, 16u, 64u}) {
    const std::size_t rounded = roundSize(kMaxRequest, divisions);
    EXPECT_GE(rounded, kMaxRequest);
    EXPECT_GE(segmentSize(rounded), rounded);
    const std::size_t odd = roundSize(kMaxRequest - 1, divisions);
    EXPECT_GE(odd, kMaxRequest - 1);
    EXPECT_GE(segmentSize(odd), odd);
  }
}

}  // namespace
}  // namespace accel::memory
