// PendingFrees (src/core/memory/device_cache/pending_frees.h) on its own: a
// block used by other streams waits for one event per stream; it comes back
// once its last event has completed, events are looked at in recording
// order only up to the first one not done, and a block whose event could
// not be recorded never comes back.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "memory/device_cache/pending_frees.h"

namespace accel::memory::detail {
namespace {

const Device kPendingDevice = Device::unchecked(DeviceType::CUDA, 0);

// Events that complete only when the test says so, one by one.
class EventSource final : public SegmentSource {
 public:
  void* allocateSegment(DeviceIndex, std::size_t) override { return nullptr; }
  void freeSegment(DeviceIndex, void*, std::size_t) noexcept override {}
  bool hasEvents() const noexcept override { return true; }
  EventId recordEvent(Stream stream) override {
    if (records_left == 0) throw std::runtime_error("event recording failed");
    if (records_left > 0) --records_left;
    recorded_on.push_back(stream);
    return ++next_;
  }
  bool eventCompleted(EventId event) noexcept override {
    ++queries;
    return done.count(event) != 0;
  }
  void releaseEvent(EventId event) noexcept override { released.push_back(event); }
  void synchronizeEvent(EventId event) override { synchronized.push_back(event); }

  int records_left = -1;  // >= 0: recordEvent throws once it reaches 0
  std::set<EventId> done;
  std::vector<Stream> recorded_on;
  std::vector<EventId> released;
  std::vector<EventId> synchronized;
  int queries = 0;

 private:
  EventId next_ = 0;
};

void useOn(Block& block, const std::vector<StreamId>& streams) {
  for (StreamId use : streams) block.addStreamUse(use);
}

class PendingFreesTest : public ::testing::Test {
 protected:
  std::vector<Block*> returned_;
  auto collect() {
    return [this](Block* block) { returned_.push_back(block); };
  }
  EventSource source_;
  PendingFrees pending_{source_, kPendingDevice};
};

TEST_F(PendingFreesTest, RecordsOneEventPerStreamUseAndClearsTheUses) {
  Block block;
  useOn(block, {2, 3});
  pending_.recordFor(&block);
  EXPECT_EQ(pending_.size(), 2u);
  EXPECT_EQ(block.event_count, 2);
  EXPECT_FALSE(block.has_stream_uses);
  ASSERT_EQ(source_.recorded_on.size(), 2u);
  EXPECT_EQ(source_.recorded_on[0], Stream(kPendingDevice, 2));
  EXPECT_EQ(source_.recorded_on[1], Stream(kPendingDevice, 3));
}

TEST_F(PendingFreesTest, ABlockComesBackOnlyWithItsLastEvent) {
  Block block;
  useOn(block, {2, 3});
  pending_.recordFor(&block);
  pending_.processCompleted(collect());
  EXPECT_TRUE(returned_.empty());
  source_.done = {1};
  pending_.processCompleted(collect());
  EXPECT_TRUE(returned_.empty());
  EXPECT_EQ(block.event_count, 1);
  EXPECT_EQ(source_.released, (std::vector<EventId>{1}));
  source_.done = {1, 2};
  pending_.processCompleted(collect());
  EXPECT_EQ(returned_, (std::vector<Block*>{&block}));
  EXPECT_TRUE(pending_.empty());
  EXPECT_EQ(source_.released, (std::vector<EventId>{1, 2}));
}

TEST_F(PendingFreesTest, ProcessingStopsAtTheFirstEventNotDone) {
  Block first;
  useOn(first, {2});
  Block second;
  useOn(second, {3});
  pending_.recordFor(&first);
  pending_.recordFor(&second);
  source_.done = {2};  // the later event only
  pending_.processCompleted(collect());
  EXPECT_TRUE(returned_.empty());
  EXPECT_EQ(source_.queries, 1);  // the scan asked about the oldest only
  EXPECT_TRUE(source_.released.empty());
  source_.done = {1, 2};
  pending_.processCompleted(collect());
  EXPECT_EQ(returned_, (std::vector<Block*>{&first, &second}));
}

TEST_F(PendingFreesTest, SynchronizeAllWaitsForEveryEventInOrder) {
  EXPECT_FALSE(pending_.synchronizeAll(collect()));
  Block first;
  useOn(first, {2, 3});
  Block second;
  useOn(second, {4});
  pending_.recordFor(&first);
  pending_.recordFor(&second);
  EXPECT_TRUE(pending_.synchronizeAll(collect()));
  EXPECT_EQ(source_.synchronized, (std::vector<EventId>{1, 2, 3}));
  EXPECT_EQ(source_.released, (std::vector<EventId>{1, 2, 3}));
  EXPECT_EQ(returned_, (std::vector<Block*>{&first, &second}));
  EXPECT_TRUE(pending_.empty());
}

TEST_F(PendingFreesTest, ABlockWhoseEventFailedNeverComesBack) {
  source_.records_left = 1;  // the second stream's event fails
  Block block;
  useOn(block, {2, 3});
  pending_.recordFor(&block);
  EXPECT_EQ(pending_.size(), 1u);
  EXPECT_EQ(block.event_count, 2);     // one recorded, one for the failure
  EXPECT_TRUE(block.has_stream_uses);  // not proven idle
  source_.done = {1};
  pending_.processCompleted(collect());
  EXPECT_TRUE(pending_.empty());
  EXPECT_TRUE(returned_.empty());
  EXPECT_EQ(block.event_count, 1);
}

TEST_F(PendingFreesTest, ForgottenEventsAreNeitherQueriedNorReleased) {
  Block inherited;
  useOn(inherited, {2});
  Block own;
  useOn(own, {3});
  pending_.recordFor(&inherited);
  pending_.recordFor(&own);
  pending_.forgetIf([&](const Block* block) { return block == &inherited; });
  EXPECT_EQ(pending_.size(), 1u);
  source_.done = {2};  // the kept block's event: the first in line now
  pending_.processCompleted(collect());
  EXPECT_EQ(returned_, (std::vector<Block*>{&own}));
  EXPECT_EQ(source_.released, (std::vector<EventId>{2}));
  EXPECT_EQ(inherited.event_count, 1);  // pending for good
}

TEST_F(PendingFreesTest, ReleaseAllReleasesOnlyTheEventsItOwns) {
  Block mine;
  useOn(mine, {2});
  Block parents;
  useOn(parents, {3});
  pending_.recordFor(&mine);
  pending_.recordFor(&parents);
  pending_.releaseAll([&](const Block* block) { return block == &mine; });
  EXPECT_TRUE(pending_.empty());
  EXPECT_EQ(source_.released, (std::vector<EventId>{1}));
}

}  // namespace
}  // namespace accel::memory::detail
