#include "accel/kit/address_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "support/error_of.h"

namespace accel::kit {
namespace {

using accel::testing::errorOf;
using ::testing::AllOf;
using ::testing::HasSubstr;

class AddressMapTest : public ::testing::Test {
 protected:
  DeviceType type_ = registerDeviceType("kit_map");
  AddressMap map_{type_};
  // Addresses are only compared, never dereferenced: a local buffer gives
  // real, distinct addresses.
  alignas(64) char buffer_[4096] = {};
};

TEST_F(AddressMapTest, InteriorPointersResolveToTheirRange) {
  map_.insert(buffer_, 1000, Device(type_, 1), MemoryKind::Device);
  map_.insert(buffer_ + 1000, 24, Device(type_, 0), MemoryKind::Device);
  EXPECT_EQ(map_.deviceOf(buffer_), Device(type_, 1));
  EXPECT_EQ(map_.deviceOf(buffer_ + 999), Device(type_, 1));
  EXPECT_EQ(map_.deviceOf(buffer_ + 1000), Device(type_, 0));
  EXPECT_EQ(map_.deviceOf(buffer_ + 1023), Device(type_, 0));
  std::optional<AddressRange> range = map_.find(buffer_ + 500);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->begin, reinterpret_cast<std::uintptr_t>(buffer_));
  EXPECT_EQ(range->size, 1000u);
  EXPECT_FALSE(map_.find(buffer_ + 1024).has_value());  // one past the end
  EXPECT_EQ(map_.count(MemoryKind::Device), 2u);
}

TEST_F(AddressMapTest, PinnedRangesAnswerIsPinnedAndAreNotDeviceMemory) {
  map_.insert(buffer_, 300, Device(DeviceType::CPU), MemoryKind::Pinned);
  map_.insert(buffer_ + 512, 300, Device(type_, 0), MemoryKind::Device);
  EXPECT_TRUE(map_.isPinned(buffer_));
  EXPECT_TRUE(map_.isPinned(buffer_ + 299));
  EXPECT_FALSE(map_.isPinned(buffer_ + 300));
  EXPECT_FALSE(map_.isPinned(buffer_ + 600));  // device memory
  EXPECT_FALSE(map_.isPinned(nullptr));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)map_.deviceOf(buffer_ + 10); }),
              AllOf(HasSubstr("is pinned host memory of 'kit_map'"),
                    HasSubstr(std::string(hookInfo(HookId::isPinnedPtr).name) +
                              "() recognises it")));
  EXPECT_EQ(map_.count(MemoryKind::Pinned), 1u);
}

TEST_F(AddressMapTest, ForeignPointersAreAClearError) {
  int local = 0;
  EXPECT_THAT(
      errorOf<InvalidArgument>([&] { (void)map_.deviceOf(&local); }),
      AllOf(HasSubstr("is not memory allocated by 'kit_map' (0 live device allocations)"),
            HasSubstr(std::string(hookInfo(HookId::getDeviceAllocator).name) +
                      "(index).allocate()")));
  EXPECT_THROW((void)map_.deviceOf(nullptr), InvalidArgument);
}

TEST_F(AddressMapTest, FreedPointersAreReportedAsFreed) {
  map_.insert(buffer_, 256, Device(type_, 1), MemoryKind::Device);
  EXPECT_TRUE(map_.erase(buffer_));
  EXPECT_FALSE(map_.erase(buffer_));  // already gone
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)map_.deviceOf(buffer_ + 8); }),
              AllOf(HasSubstr("points into memory of 'kit_map' that was freed"),
                    HasSubstr("the 256-byte allocation at"), HasSubstr("kit_map:1")));
  EXPECT_FALSE(map_.isPinned(buffer_ + 8));
  EXPECT_EQ(map_.count(MemoryKind::Device), 0u);
}

TEST_F(AddressMapTest, OnlyTheNewestFreesAreRemembered) {
  for (int i = 0; i <= AddressMap::kRememberedFrees; ++i) {
    map_.insert(buffer_ + i, 1, Device(type_, 0), MemoryKind::Device);
    map_.erase(buffer_ + i);
  }
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)map_.deviceOf(buffer_); }),
              HasSubstr("is not memory allocated by"));  // the oldest was forgotten
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)map_.deviceOf(buffer_ + 1); }),
              HasSubstr("was freed"));
}

TEST_F(AddressMapTest, AReusedAddressBelongsToItsNewOwner) {
  map_.insert(buffer_, 64, Device(type_, 0), MemoryKind::Device);
  map_.erase(buffer_);
  map_.insert(buffer_, 64, Device(type_, 1), MemoryKind::Device);
  EXPECT_EQ(map_.deviceOf(buffer_ + 1), Device(type_, 1));
}

TEST_F(AddressMapTest, InsertRejectsOverlapsAndEmptyRanges) {
  map_.insert(buffer_ + 100, 100, Device(type_, 0), MemoryKind::Device);
  for (int start : {50, 100, 150, 199}) {
    EXPECT_THAT(errorOf<InvalidArgument>([&] {
                  map_.insert(buffer_ + start, 60, Device(type_, 1), MemoryKind::Device);
                }),
                HasSubstr("overlap the live range of 100 bytes"))
        << start;
  }
  EXPECT_NO_THROW(map_.insert(buffer_ + 40, 60, Device(type_, 1), MemoryKind::Device));
  EXPECT_NO_THROW(map_.insert(buffer_ + 200, 1, Device(type_, 1), MemoryKind::Device));
  EXPECT_THROW(map_.insert(buffer_, 0, Device(type_, 0), MemoryKind::Device),
               InvalidArgument);
  EXPECT_THROW(map_.insert(nullptr, 8, Device(type_, 0), MemoryKind::Device),
               InvalidArgument);
  EXPECT_THROW(map_.insert(buffer_, SIZE_MAX, Device(type_, 0), MemoryKind::Device),
               InvalidArgument);
}

TEST_F(AddressMapTest, ConcurrentInsertLookupAndEraseStayConsistent) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 64;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (int i = 0; i < kPerThread; ++i) {
          char* p = buffer_ + (t * kPerThread + i) * 16;
          map_.insert(p, 16, Device(type_, static_cast<DeviceIndex>(t)),
                      MemoryKind::Device);
        }
        for (int i = 0; i < kPerThread; ++i) {
          char* p = buffer_ + (t * kPerThread + i) * 16;
          if (map_.deviceOf(p + 15) != Device(type_, static_cast<DeviceIndex>(t)))
            ++wrong;
          if (!map_.erase(p)) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(map_.count(MemoryKind::Device), 0u);
}

}  // namespace
}  // namespace accel::kit
