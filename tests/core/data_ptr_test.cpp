// DataPtr's moves: ownership passes whole (pointer, context, deleter,
// device), the source is left empty, and the allocation a move-assignment
// replaces is freed exactly once.
#include "accel/allocator.h"

#include <gtest/gtest.h>

#include <utility>

namespace accel {
namespace {

int g_freed = 0;
void* g_last_freed = nullptr;

void countFree(void* context) noexcept {
  ++g_freed;
  g_last_freed = context;
}

class DataPtrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_freed = 0;
    g_last_freed = nullptr;
  }
  int first_ = 1;
  int second_ = 2;
  const Device where_ = Device::unchecked(DeviceType::CUDA, 3);
};

TEST_F(DataPtrTest, MoveConstructionTakesEveryFieldAndEmptiesTheSource) {
  DataPtr source(&first_, &second_, &countFree, where_);
  DataPtr taken(std::move(source));
  EXPECT_EQ(taken.get(), &first_);
  EXPECT_EQ(taken.context(), &second_);
  EXPECT_EQ(taken.deleter(), &countFree);
  EXPECT_EQ(taken.device(), where_);
  EXPECT_EQ(source.get(), nullptr);  // NOLINT(bugprone-use-after-move): the contract
  EXPECT_EQ(source.deleter(), nullptr);
  source.reset();
  EXPECT_EQ(g_freed, 0);
  taken.reset();
  EXPECT_EQ(g_freed, 1);
  EXPECT_EQ(g_last_freed, &second_);
}

TEST_F(DataPtrTest, MoveAssignmentFreesTheReplacedAllocationOnce) {
  DataPtr kept(&first_, &first_, &countFree, where_);
  DataPtr incoming(&second_, &second_, &countFree, Device::unchecked(DeviceType::CPU, 0));
  kept = std::move(incoming);
  EXPECT_EQ(g_freed, 1);
  EXPECT_EQ(g_last_freed, &first_);
  EXPECT_EQ(kept.get(), &second_);
  EXPECT_EQ(kept.device(), Device::unchecked(DeviceType::CPU, 0));
  EXPECT_EQ(incoming.get(), nullptr);  // NOLINT(bugprone-use-after-move): the contract
  incoming.reset();
  EXPECT_EQ(g_freed, 1);
  kept.reset();
  EXPECT_EQ(g_freed, 2);
  EXPECT_EQ(g_last_freed, &second_);
}

TEST_F(DataPtrTest, SelfMoveAssignmentKeepsTheAllocation) {
  DataPtr kept(&first_, &first_, &countFree, where_);
  DataPtr& alias = kept;
  kept = std::move(alias);
  EXPECT_EQ(g_freed, 0);
  EXPECT_EQ(kept.get(), &first_);
  EXPECT_EQ(kept.device(), where_);
  kept.reset();
  EXPECT_EQ(g_freed, 1);
}

}  // namespace
}  // namespace accel
