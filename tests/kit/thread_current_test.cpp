#include "accel/kit/thread_current.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "support/error_of.h"

namespace accel::kit {
namespace {

using accel::testing::errorOf;
using ::testing::HasSubstr;

TEST(ThreadCurrentTest, DeviceIsZeroUntilSetAndExchangeReturnsThePrevious) {
  ThreadCurrent current;
  EXPECT_EQ(current.device(), 0);
  current.setDevice(3);
  EXPECT_EQ(current.device(), 3);
  EXPECT_EQ(current.exchangeDevice(1), 3);
  EXPECT_EQ(current.device(), 1);
}

TEST(ThreadCurrentTest, EachObjectHasItsOwnValues) {
  ThreadCurrent a;
  ThreadCurrent b;
  a.setDevice(2);
  a.setStream(0, 7);
  EXPECT_EQ(b.device(), 0);
  EXPECT_EQ(b.stream(0), kDefaultStreamId);
  EXPECT_EQ(a.device(), 2);
  EXPECT_EQ(a.stream(0), 7);
}

TEST(ThreadCurrentTest, AlternatingObjectsKeepTheirDevices) {
  // device() reads a one-entry cache of the object used last on the thread;
  // switching objects must always fall back to the right values.
  ThreadCurrent a;
  ThreadCurrent b;
  for (int i = 0; i < 10; ++i) {
    a.setDevice(static_cast<DeviceIndex>(i));
    EXPECT_EQ(b.device(), i == 0 ? 0 : i + 50 - 1);
    b.setDevice(static_cast<DeviceIndex>(i + 50));
    EXPECT_EQ(a.device(), i);
    EXPECT_EQ(a.exchangeDevice(static_cast<DeviceIndex>(i)), i);
    EXPECT_EQ(b.device(), i + 50);
  }
}

TEST(ThreadCurrentTest, ValuesArePerThread) {
  ThreadCurrent current;
  current.setDevice(1);
  current.setStream(1, 4);
  std::thread([&] {
    EXPECT_EQ(current.device(), 0);
    EXPECT_EQ(current.stream(1), kDefaultStreamId);
    current.setDevice(2);
    current.setStream(1, 9);
  }).join();
  EXPECT_EQ(current.device(), 1);
  EXPECT_EQ(current.stream(1), 4);
}

TEST(ThreadCurrentTest, StreamsArePerDevice) {
  ThreadCurrent current;
  current.setStream(0, 5);
  EXPECT_EQ(current.stream(1), kDefaultStreamId);
  EXPECT_EQ(current.exchangeStream(1, 6), kDefaultStreamId);
  EXPECT_EQ(current.exchangeStream(0, 8), 5);
  EXPECT_EQ(current.stream(0), 8);
  EXPECT_EQ(current.stream(1), 6);
}

TEST(ThreadCurrentTest, AnObjectInADestroyedOnesPlaceStartsFresh) {
  auto first = std::make_unique<ThreadCurrent>();
  first->setDevice(5);
  first->setStream(5, 3);
  first.reset();  // frees its slot for the next object
  ThreadCurrent second;
  EXPECT_EQ(second.device(), 0);
  EXPECT_EQ(second.stream(5), kDefaultStreamId);
}

TEST(ThreadCurrentTest, StreamEntriesOfDestroyedObjectsAreReused) {
  // A thread that outlives many objects must not grow without bound; this
  // checks the observable part: values stay right across many generations.
  for (int i = 0; i < 1000; ++i) {
    ThreadCurrent current;
    EXPECT_EQ(current.stream(0), kDefaultStreamId);
    current.setStream(0, i + 1);
    ASSERT_EQ(current.stream(0), i + 1);
  }
}

TEST(ThreadCurrentTest, TooManyLiveObjectsIsAClearError) {
  std::vector<std::unique_ptr<ThreadCurrent>> live;
  std::string message;
  try {
    for (int i = 0; i <= ThreadCurrent::kMaxLive; ++i) {
      live.push_back(std::make_unique<ThreadCurrent>());
    }
  } catch (const InvalidArgument& e) {
    message = e.message();
  }
  EXPECT_THAT(message, HasSubstr("objects are alive already"));
  EXPECT_LE(live.size(), static_cast<std::size_t>(ThreadCurrent::kMaxLive));
  live.pop_back();
  EXPECT_NO_THROW(ThreadCurrent());
}

TEST(ThreadCurrentTest, ConcurrentThreadsKeepTheirOwnValues) {
  ThreadCurrent current;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&current, t] {
      for (int i = 0; i < 2000; ++i) {
        current.setDevice(static_cast<DeviceIndex>(t));
        current.setStream(static_cast<DeviceIndex>(t % 2), t * 1000 + i);
        ASSERT_EQ(current.device(), t);
        ASSERT_EQ(current.stream(static_cast<DeviceIndex>(t % 2)), t * 1000 + i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// Set from a static object's destructor, after the main thread's thread_local
// destructors ran: must neither crash nor lose the value.
struct SetsStreamAtExit {
  ~SetsStreamAtExit() {
    current.setStream(0, 42);
    if (current.stream(0) != 42) std::abort();
  }
  ThreadCurrent current;
};
SetsStreamAtExit g_sets_stream_at_exit;

TEST(ThreadCurrentTest, UsableDuringStaticDestruction) {
  g_sets_stream_at_exit.current.setStream(0, 1);  // the block exists before exit
  EXPECT_EQ(g_sets_stream_at_exit.current.stream(0), 1);
}

}  // namespace
}  // namespace accel::kit
