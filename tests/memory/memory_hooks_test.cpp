// CachingAllocatorHooks' answers to the capacity and accounting hooks
// (getMemoryInfo, resetAccumulatedMemoryStats, setMemoryFraction,
// hostMemoryStats), their refusals where a backend cannot answer, and the
// allocator features behind them.
#include "accel/memory/memory_hooks.h"

#include <gmock/gmock.h>

#include <limits>
#include <string>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"
#include "support/error_of.h"

namespace accel::memory {
namespace {

using testing::FakeSegmentSource;
using ::testing::HasSubstr;

using testing::kMiB;
constexpr std::int64_t kSmallSegment = 2 << 20;

using testing::stream;

// A source that cannot tell its capacity (SegmentSource's default memoryInfo).
class CapacityUnknownSource final : public FakeSegmentSource {
 public:
  using FakeSegmentSource::FakeSegmentSource;
  DeviceMemoryInfo memoryInfo(DeviceIndex) const noexcept override { return {}; }
};

// A backend whose memory groups come from the allocator; with or without a
// pinned cache.
class PluggedHooks final : public CachingAllocatorHooks<> {
 public:
  PluggedHooks(CachingAllocator& allocator, PinnedCachingAllocator* pinned)
      : CachingAllocatorHooks<>(
            DeviceType::CUDA,
            Capabilities{HookGroup::Low, HookGroup::High, HookGroup::Memory}),
        allocator_(allocator),
        pinned_(pinned) {}

 protected:
  CachingAllocator& cachingAllocator() const override { return allocator_; }
  PinnedCachingAllocator* pinnedCachingAllocator() const override { return pinned_; }
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void setCurrentDeviceImpl(DeviceIndex) override {}
  void initImpl() override {}

 private:
  CachingAllocator& allocator_;
  PinnedCachingAllocator* pinned_;
};

TEST(MemoryHooks, GetMemoryInfoIsTheSourceCapacityWithCachedSegmentsCountedAsUsed) {
  FakeSegmentSource source(64 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  PluggedHooks hooks(allocator, nullptr);
  EXPECT_EQ(hooks.getMemoryInfo(), (DeviceMemoryInfo{64 * kMiB, 64 * kMiB}));
  allocator.allocate(0, 1000, stream(0)).reset();  // freed, its segment cached
  EXPECT_EQ(hooks.getMemoryInfo(0).free_bytes, 64 * kMiB - kSmallSegment);
  hooks.emptyCache();
  EXPECT_EQ(hooks.getMemoryInfo(0).free_bytes, 64 * kMiB);
}

TEST(MemoryHooks, UnknownCapacityIsNotSupportedNamingBackendAndHook) {
  CapacityUnknownSource source(64 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  PluggedHooks hooks(allocator, nullptr);
  for (const HookId hook : {HookId::getMemoryInfo, HookId::setMemoryFraction}) {
    SCOPED_TRACE(hookInfo(hook).name);
    const std::string message = accel::testing::errorOf<NotSupported>([&] {
      if (hook == HookId::getMemoryInfo)
        (void)hooks.getMemoryInfo(0);
      else
        hooks.setMemoryFraction(0.5, 0);
    });
    EXPECT_THAT(message, HasSubstr("'cuda'"));
    EXPECT_THAT(message, HasSubstr(std::string(hookInfo(hook).name)));
  }
  // The undeclared-group error is another one: the group is declared here.
  EXPECT_NO_THROW(hooks.resetAccumulatedMemoryStats(0));
}

TEST(MemoryHooks, HostMemoryStatsAreThePinnedCacheOrNotSupportedWithoutOne) {
  FakeSegmentSource source(64 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  FakeSegmentSource pinned_source(64 * kMiB);
  PinnedCachingAllocator pinned(pinned_source);
  PluggedHooks with(allocator, &pinned);
  DataPtr block = pinned.allocate(3000);
  EXPECT_EQ(with.hostMemoryStats(), pinned.stats());
  EXPECT_EQ(with.hostMemoryStats().allocations.current, 1);
  PluggedHooks without(allocator, nullptr);
  const std::string message =
      accel::testing::errorOf<NotSupported>([&] { (void)without.hostMemoryStats(); });
  EXPECT_THAT(message, HasSubstr("'cuda'"));
  EXPECT_THAT(message, HasSubstr(std::string(hookInfo(HookId::hostMemoryStats).name)));
}

TEST(MemoryHooks, FractionZeroRefusesEveryAllocationAndBadFractionsAreRefused) {
  FakeSegmentSource source(64 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  PluggedHooks hooks(allocator, nullptr);
  hooks.setMemoryFraction(0.0, 0);
  // The message names a capacity of 0 and the fraction it comes from.
  const std::string refused = accel::testing::errorOf<OutOfMemory>(
      [&] { (void)allocator.allocate(0, 512, stream(0)); });
  EXPECT_THAT(refused, HasSubstr("Capacity: 0 B (the allocator's limit: " +
                                 std::string(hookInfo(HookId::setMemoryFraction).name) +
                                 "(0) of 64.00 MiB; it allows no allocation)"));
  hooks.setMemoryFraction(0.5, 0);  // 32 MiB
  // 20 MiB: a segment of its own each (above 10 MiB), 40 MiB for two.
  DataPtr fits = allocator.allocate(0, 20 * kMiB, stream(0));
  EXPECT_THROW((void)allocator.allocate(0, 20 * kMiB, stream(0)), OutOfMemory);
  for (const double bad : {-0.01, 1.01, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(bad);
    const std::string message = accel::testing::errorOf<InvalidArgument>(
        [&] { hooks.setMemoryFraction(bad, 0); });
    EXPECT_THAT(message, HasSubstr("between 0 and 1"));
    EXPECT_THROW(allocator.setMemoryFraction(0, bad), InvalidArgument);
  }
  hooks.setMemoryFraction(1.0, 0);
  EXPECT_TRUE(allocator.allocate(0, 20 * kMiB, stream(0)));
}

TEST(MemoryHooks, ResetAccumulatedZeroesCumulativeFiguresAndCountsFromThere) {
  FakeSegmentSource source(64 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  PluggedHooks hooks(allocator, nullptr);
  allocator.allocate(0, 4096, stream(0)).reset();
  DataPtr kept = allocator.allocate(0, 8192, stream(0));
  EXPECT_THROW((void)allocator.allocate(0, 100 * kMiB, stream(0)), OutOfMemory);
  const MemoryStats before = hooks.memoryStats(0);
  ASSERT_EQ(before.num_ooms, 1);
  hooks.resetAccumulatedMemoryStats(0);
  const MemoryStats reset = hooks.memoryStats(0);
  EXPECT_EQ(reset.allocated_bytes.allocated, 0);
  EXPECT_EQ(reset.allocated_bytes.freed, 0);
  EXPECT_EQ(reset.allocated_bytes.small_pool.allocated, 0);
  EXPECT_EQ(reset.reserved_bytes.allocated, 0);
  EXPECT_EQ(reset.segments.freed, 0);
  EXPECT_EQ(reset.num_ooms, 0);
  EXPECT_EQ(reset.num_alloc_retries, 0);
  EXPECT_EQ(reset.num_device_alloc, 0);
  EXPECT_EQ(reset.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(reset.allocated_bytes.peak, before.allocated_bytes.peak);
  EXPECT_EQ(reset.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(reset.max_split_size, before.max_split_size);
  kept.reset();
  DataPtr again = allocator.allocate(0, 512, stream(0));
  const MemoryStats after = hooks.memoryStats(0);
  EXPECT_EQ(after.allocated_bytes.allocated, 512);
  EXPECT_EQ(after.allocated_bytes.freed, 8192);
  EXPECT_EQ(after.allocations.allocated, 1);
  EXPECT_EQ(after.allocations.freed, 1);
  EXPECT_EQ(after.allocated_bytes.current, 512);  // current is not cumulative
}

}  // namespace
}  // namespace accel::memory
