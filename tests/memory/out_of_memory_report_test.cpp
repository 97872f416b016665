// OutOfMemoryReport (src/core/memory/device_cache/out_of_memory_report.h) on
// its own: the facts read from a device's segments and figures (free bytes
// under a cap, the largest free block, fragmentation, private pools), the
// message's opening and the one suggestion that would change something, and
// raise: the sink is told before OutOfMemory is thrown.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/memory/size_rules.h"
#include "memory/device_cache/out_of_memory_report.h"
#include "memory/test_units.h"

namespace accel::memory::detail {
namespace {

using testing::kMiB;
const Device kReportDevice = Device::unchecked(DeviceType::CUDA, 0);

// Segments laid out by the test: each a list of (size, allocated) blocks.
class Segments {
 public:
  void add(BlockPool& pool, std::vector<std::pair<std::size_t, bool>> blocks) {
    auto segment = std::make_unique<Segment>();
    segment->base = next_;
    segment->pool = &pool;
    Block* prev = nullptr;
    for (const auto& [size, allocated] : blocks) {
      auto& block = blocks_.emplace_back(std::make_unique<Block>());
      block->ptr = next_;
      block->size = size;
      block->allocated = allocated;
      block->segment = segment.get();
      block->prev = prev;
      if (prev != nullptr) {
        prev->next = block.get();
      } else {
        segment->head = block.get();
      }
      prev = block.get();
      segment->size += size;
      next_ += size;
    }
    next_ += kMiB;  // apart
    map_.emplace(segment->base, std::move(segment));
  }
  const SegmentMap& map() const { return map_; }

 private:
  std::vector<std::unique_ptr<Block>> blocks_;
  SegmentMap map_;
  std::byte* next_ = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 40);
};

struct RecordingSink final : OutOfMemorySink {
  void notify(const OutOfMemoryEvent& event) const noexcept override {
    events.push_back(event);
  }
  mutable std::vector<OutOfMemoryEvent> events;
};

OutOfMemoryScene scene(std::size_t requested, std::size_t reserved, std::size_t allocated,
                       const Segments* segments = nullptr) {
  OutOfMemoryScene out{.device = kReportDevice};
  out.stream = 3;
  out.requested = requested;
  out.memory = {64 * kMiB, 1 * kMiB};
  out.reserved_bytes = static_cast<std::int64_t>(reserved);
  out.allocated_bytes = static_cast<std::int64_t>(allocated);
  out.segments = segments != nullptr ? &segments->map() : nullptr;
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(OutOfMemoryReportTest, FactsComeFromTheSegmentsAndFigures) {
  BlockPool large(false, nullptr);
  PrivatePool captured(MempoolId{1, 0});
  Segments segments;
  segments.add(large, {{1 * kMiB, true}, {1 * kMiB, false}, {2 * kMiB, true}});
  segments.add(captured.large, {{4 * kMiB, false}});
  const OutOfMemoryReport report(scene(8 * kMiB, 8 * kMiB, 3 * kMiB, &segments));
  const OutOfMemoryEvent& facts = report.facts();
  EXPECT_EQ(facts.device, 0);
  EXPECT_EQ(facts.requested_bytes, 8 * kMiB);
  EXPECT_EQ(facts.device_total_bytes, 64 * kMiB);
  EXPECT_EQ(facts.device_free_bytes, 1 * kMiB);
  EXPECT_EQ(facts.allocated_bytes, 3 * kMiB);
  EXPECT_EQ(facts.reserved_bytes, 8 * kMiB);
  EXPECT_EQ(facts.reserved_unallocated_bytes, 5 * kMiB);
  EXPECT_EQ(facts.private_pool_bytes, 4 * kMiB);
  EXPECT_EQ(facts.largest_free_block, 4 * kMiB);
  EXPECT_DOUBLE_EQ(facts.fragmentation, 1.0 - 4.0 / 5.0);
  EXPECT_EQ(facts.stream, Stream(kReportDevice, 3));
}

TEST(OutOfMemoryReportTest, ACapBoundsCapacityAndFreeBytes) {
  OutOfMemoryScene capped = scene(4 * kMiB, 8 * kMiB, 8 * kMiB);
  capped.memory = {64 * kMiB, 50 * kMiB};
  capped.cap = ReserveCap{true, 10 * kMiB, std::nullopt, 0};
  OutOfMemoryReport report(capped);
  EXPECT_EQ(report.facts().device_total_bytes, 10 * kMiB);
  EXPECT_EQ(report.facts().device_free_bytes, 2 * kMiB);  // the room under the cap
  EXPECT_TRUE(contains(report.message(), "Capacity: 10.00 MiB (the allocator's limit)"))
      << report.message();
  capped.memory = {0, 0};  // a source that cannot tell: the cap decides
  EXPECT_EQ(OutOfMemoryReport(capped).facts().device_free_bytes, 2 * kMiB);
  capped.cap = ReserveCap{true, 0, 0.0, 64 * kMiB};
  EXPECT_TRUE(contains(OutOfMemoryReport(capped).message(),
                       "(0) of 64.00 MiB; it allows no allocation)"))
      << OutOfMemoryReport(capped).message();
}

TEST(OutOfMemoryReportTest, TheMessageOpensAsPyTorchsDoes) {
  const OutOfMemoryReport report(scene(2 * kMiB, 0, 0));
  EXPECT_EQ(report.message().rfind("cuda:0 is out of memory. Tried to allocate 2.00 MiB "
                                   "(2097152 bytes) on stream 3. Capacity: 64.00 MiB; "
                                   "free: 1.00 MiB; allocated: 0 B; ",
                                   0),
            0u)
      << report.message();
  OutOfMemoryScene unknown = scene(2 * kMiB, 0, 0);
  unknown.memory = {0, 0};
  EXPECT_TRUE(contains(OutOfMemoryReport(unknown).message(), "Capacity: unknown;"));
}

TEST(OutOfMemoryReportTest, OneSuggestionThatWouldChangeSomething) {
  // Nothing reserved to reuse: free tensors.
  EXPECT_TRUE(contains(OutOfMemoryReport(scene(2 * kMiB, 4 * kMiB, 4 * kMiB)).message(),
                       "Free tensors you no longer need, or use smaller batches."));
  // Reserved but unallocated: expandable segments where pages map...
  OutOfMemoryScene fragmented = scene(2 * kMiB, 8 * kMiB, 4 * kMiB);
  fragmented.maps_pages = true;
  EXPECT_TRUE(contains(OutOfMemoryReport(fragmented).message(),
                       "ACCEL_ALLOC_CONF=expandable_segments:true."));
  // ... else (or when they are on) max_split_size ...
  fragmented.expandable_segments = true;
  EXPECT_TRUE(contains(OutOfMemoryReport(fragmented).message(),
                       "ACCEL_ALLOC_CONF=max_split_size_mb:<MiB>."));
  // ... and when that is set too, nothing but freeing is left.
  fragmented.max_split_size = 32 * kMiB;
  EXPECT_TRUE(contains(OutOfMemoryReport(fragmented).message(), "Free tensors"));
  // A fraction below the device refused it: the fraction is what to change.
  OutOfMemoryScene fraction = scene(4 * kMiB, 8 * kMiB, 8 * kMiB);
  fraction.cap = ReserveCap{true, 10 * kMiB, 0.25, 40 * kMiB};
  EXPECT_TRUE(contains(OutOfMemoryReport(fraction).message(),
                       "The limit is this process's memory fraction, not the device"))
      << OutOfMemoryReport(fraction).message();
}

TEST(OutOfMemoryReportTest, ARequestNoDeviceHoldsSaysSo) {
  const std::string message = OutOfMemoryReport(scene(kMaxRequest + 1, 0, 0)).message();
  EXPECT_TRUE(contains(message, "No device holds that much")) << message;
  EXPECT_FALSE(contains(message, "Free tensors")) << message;
}

TEST(OutOfMemoryReportTest, RaiseTellsTheSinkThenThrowsTheMessage) {
  const OutOfMemoryReport report(scene(2 * kMiB, 0, 0));
  RecordingSink sink;
  try {
    report.raise(sink);
    FAIL() << "raise returned";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()).rfind(report.message(), 0), 0u) << e.what();
  }
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].requested_bytes, 2 * kMiB);
  EXPECT_EQ(sink.events[0].stream, Stream(kReportDevice, 3));
}

}  // namespace
}  // namespace accel::memory::detail
