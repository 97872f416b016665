// Streams of the opencl backend: in-order queues, queries that see pending
// work, per-thread current streams.
#include <thread>
#include <vector>

#include "opencl_test_support.h"

namespace accel::opencl::testing {
namespace {

using StreamTest = OpenClTest;

TEST_F(StreamTest, QueryIsFalseWhileWorkIsPendingAndTrueAfterIt) {
  const Stream stream = hooks().getNewStream(0);
  HeldQueue held(nativeQueue(stream));
  EXPECT_FALSE(hooks().queryStream(stream));
  EXPECT_FALSE(hooks().queryStream(stream));
  held.release();
  hooks().synchronizeStream(stream);
  EXPECT_TRUE(hooks().queryStream(stream));
}

TEST_F(StreamTest, QueryRightAfterSynchronizeIsTrueEveryTime) {
  // pocl may keep a marker queued for a moment after clFinish returned
  // (docs/opencl.md, "Stream queries"): the query must not report that.
  const Stream stream = hooks().getNewStream(0);
  int falses = 0;
  for (int i = 0; i < 500; ++i) {
    hooks().synchronizeStream(stream);
    if (!hooks().queryStream(stream)) ++falses;
  }
  EXPECT_EQ(falses, 0);
}

TEST_F(StreamTest, QueryOfAStreamWaitingForAnotherStreamsEventIsFalseUntilThatRuns) {
  // `waiting`'s queue never leaves the backend: its query reads the last
  // command the backend enqueued on it, the barrier on the event.
  const Stream held_stream = hooks().getNewStream(0);
  const Stream waiting = hooks().getNewStream(0);
  HeldQueue held(nativeQueue(held_stream));
  const EventId event = hooks().createEvent(0);
  hooks().recordEvent(event, held_stream);
  EXPECT_TRUE(hooks().queryStream(waiting));
  hooks().blockStream(event, waiting);
  EXPECT_FALSE(hooks().queryStream(waiting));
  EXPECT_FALSE(hooks().queryStream(waiting));
  held.release();
  hooks().synchronizeStream(waiting);
  EXPECT_TRUE(hooks().queryStream(waiting));
  hooks().destroyEvent(event);
}

TEST_F(StreamTest, QueryAfterCopiesAndSynchronizeIsTrueEveryTime) {
  // The query answers from the copy's own event: complete once clFinish
  // has returned, every time.
  const Stream stream = hooks().getNewStream(0);
  const DataPtr device_memory = hooks().getDeviceAllocator(0).allocate(256);
  const std::vector<unsigned char> host(256, 7);
  int falses = 0;
  for (int i = 0; i < 300; ++i) {
    hooks().copyHostToDevice(device_memory.get(), host.data(), host.size(), stream);
    hooks().synchronizeStream(stream);
    if (!hooks().queryStream(stream)) ++falses;
  }
  EXPECT_EQ(falses, 0);
}

TEST_F(StreamTest, QueryOfAStreamWhoseQueueWasHandedOutSeesWorkEnqueuedOnIt) {
  const Stream stream = hooks().getNewStream(0);
  const DataPtr device_memory = hooks().getDeviceAllocator(0).allocate(64);
  const std::vector<unsigned char> host(64, 1);
  hooks().copyHostToDevice(device_memory.get(), host.data(), host.size(), stream);
  hooks().synchronizeStream(stream);
  EXPECT_TRUE(hooks().queryStream(stream));
  // From here anyone may enqueue on it: the backend's own commands no
  // longer tell.
  HeldQueue held(nativeQueue(stream));
  EXPECT_FALSE(hooks().queryStream(stream));
  held.release();
  hooks().synchronizeStream(stream);
  EXPECT_TRUE(hooks().queryStream(stream));
}

TEST_F(StreamTest, DeviceSynchronizeWaitsForEveryQueue) {
  const Stream a = hooks().getNewStream(0);
  const Stream b = hooks().getNewStream(0);
  ASSERT_NE(a, b);
  HeldQueue held(nativeQueue(a));
  std::thread releaser([&] { held.release(); });
  hooks().deviceSynchronize(0);
  releaser.join();
  EXPECT_TRUE(hooks().queryStream(a));
  EXPECT_TRUE(hooks().queryStream(b));
}

TEST_F(StreamTest, CurrentStreamIsPerThread) {
  const Stream mine = hooks().getNewStream(0);
  hooks().setCurrentStream(mine);
  Stream seen;
  std::thread other([&] { seen = hooks().getCurrentStream(0); });
  other.join();
  EXPECT_EQ(seen, hooks().getDefaultStream(0));
  EXPECT_EQ(hooks().getCurrentStream(0), mine);
  hooks().setCurrentStream(hooks().getDefaultStream(0));
}

TEST_F(StreamTest, PriorityRangeFollowsPriorityHints) {
  const auto [least, greatest] = hooks().streamPriorityRange();
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, deviceInfo(0).priority_hints ? 1 : 0);
}

}  // namespace
}  // namespace accel::opencl::testing
