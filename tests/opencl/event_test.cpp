// Events of the opencl backend: markers, barriers and profiling timing on
// the real driver.
#include <atomic>
#include <string>
#include <thread>

#include "opencl_test_support.h"

namespace accel::opencl::testing {
namespace {

using EventTest = OpenClTest;

TEST_F(EventTest, EventIsIncompleteWhileTheQueueIsHeld) {
  const Stream stream = hooks().getNewStream(0);
  const EventId event = hooks().createEvent(0);
  EXPECT_TRUE(hooks().queryEvent(event));  // never recorded: nothing to wait for
  HeldQueue held(nativeQueue(stream));
  hooks().recordEvent(event, stream);
  EXPECT_FALSE(hooks().queryEvent(event));
  held.release();
  hooks().synchronizeEvent(event);
  EXPECT_TRUE(hooks().queryEvent(event));
  hooks().destroyEvent(event);
}

// A wait holds its own reference to the marker it waits for: another thread
// recording the event again (which drops the table's reference to the old
// marker) must neither free the marker under the wait nor end it early.
// Deterministic without sleeps: whichever marker the waiter picked up sits
// behind the held queue, so no wait can finish before release().
TEST_F(EventTest, RecordingAgainWhileAnotherThreadWaitsLeavesTheWaitIntact) {
  const Stream stream = hooks().getNewStream(0);
  const EventId event = hooks().createEvent(0);
  HeldQueue held(nativeQueue(stream));
  hooks().recordEvent(event, stream);
  std::atomic<bool> waited{false};
  std::atomic<bool> seen_complete{false};
  std::thread waiter([&] {
    hooks().synchronizeEvent(event);
    waited = true;
  });
  std::thread querier([&] {
    for (int i = 0; i < 200 && !waited; ++i) {
      if (hooks().queryEvent(event) && !waited) seen_complete = true;
    }
  });
  for (int i = 0; i < 200; ++i) hooks().recordEvent(event, stream);
  querier.join();
  EXPECT_FALSE(waited);
  EXPECT_FALSE(seen_complete);  // every marker is behind the held queue
  held.release();
  waiter.join();
  EXPECT_TRUE(waited);
  hooks().synchronizeEvent(event);
  EXPECT_TRUE(hooks().queryEvent(event));
  hooks().destroyEvent(event);
}

TEST_F(EventTest, BlockStreamMakesAnotherQueueWait) {
  const Stream producer = hooks().getNewStream(0);
  const Stream consumer = hooks().getNewStream(0);
  ASSERT_NE(producer, consumer);
  const EventId produced = hooks().createEvent(0);
  const EventId consumed = hooks().createEvent(0);
  HeldQueue held(nativeQueue(producer));
  hooks().recordEvent(produced, producer);
  hooks().blockStream(produced, consumer);
  hooks().recordEvent(consumed, consumer);
  EXPECT_FALSE(hooks().queryEvent(consumed));  // waits for the held producer
  held.release();
  hooks().synchronizeEvent(consumed);
  EXPECT_TRUE(hooks().queryEvent(produced));
  hooks().destroyEvent(produced);
  hooks().destroyEvent(consumed);
}

TEST_F(EventTest, ElapsedTimeComesFromProfilingAndNeedsTimedCompletedEvents) {
  EventFlags timing;
  timing.enable_timing = true;
  const Stream stream = hooks().getDefaultStream(0);
  const EventId start = hooks().createEvent(0, timing);
  const EventId end = hooks().createEvent(0, timing);
  EXPECT_THROW((void)hooks().elapsedTime(start, end), InvalidArgument);  // unrecorded
  hooks().recordEvent(start, stream);
  hooks().recordEvent(end, stream);
  hooks().synchronizeEvent(end);
  const double ms = hooks().elapsedTime(start, end);
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 60'000.0);
  const EventId plain = hooks().createEvent(0);
  hooks().recordEvent(plain, stream);
  hooks().synchronizeEvent(plain);
  EXPECT_THROW((void)hooks().elapsedTime(start, plain), InvalidArgument);
  for (EventId e : {start, end, plain}) hooks().destroyEvent(e);
}

TEST_F(EventTest, InterprocessEventsAreNotSupported) {
  EventFlags flags;
  flags.interprocess = true;
  EXPECT_THROW((void)hooks().createEvent(0, flags), NotSupported);
}

}  // namespace
}  // namespace accel::opencl::testing
