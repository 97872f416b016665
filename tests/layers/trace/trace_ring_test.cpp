// TraceRing: bounded, newest events kept, the number lost exact, events
// whole when many threads push while another collects.
#include "layers/trace/trace_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace accel::trace::detail {
namespace {

TraceEvent numbered(std::uint64_t n, std::uint32_t writer = 0) {
  TraceEvent event;  // begin and end stay below 2^63 for every n used here
  event.kind = TraceEventKind::Hook;
  event.hook = HookId::getCurrentStream;
  event.thread = writer;
  event.bytes = n;
  event.ptr = n * 3 + 1;  // a second field tied to the first: a torn event breaks it
  event.begin = static_cast<std::int64_t>(n);
  event.end = static_cast<std::int64_t>(n) + 7;
  return event;
}

TEST(TraceRing, CapacityIsAPowerOfTwoOfAtLeast1024) {
  EXPECT_EQ(TraceRing(1).capacity(), 1024u);
  EXPECT_EQ(TraceRing(3000).capacity(), 4096u);
  EXPECT_EQ(TraceRing(4096).capacity(), 4096u);
}

TEST(TraceRing, KeepsEveryEventWhileItFitsOldestFirst) {
  TraceRing ring(1024);
  for (std::uint64_t n = 0; n < 1000; ++n) ring.push(numbered(n));
  const TraceRing::Contents contents = ring.collect();
  ASSERT_EQ(contents.events.size(), 1000u);
  EXPECT_EQ(contents.dropped, 0u);
  for (std::uint64_t n = 0; n < 1000; ++n) {
    EXPECT_EQ(contents.events[n].bytes, n);
    EXPECT_EQ(contents.events[n].end, static_cast<std::int64_t>(n) + 7);
    EXPECT_EQ(contents.events[n].hook, HookId::getCurrentStream);
  }
}

TEST(TraceRing, KeepsTheNewestAndCountsWhatItDropped) {
  TraceRing ring(1024);
  for (std::uint64_t n = 0; n < 5000; ++n) ring.push(numbered(n));
  const TraceRing::Contents contents = ring.collect();
  ASSERT_EQ(contents.events.size(), 1024u);
  EXPECT_EQ(contents.dropped, 5000u - 1024u);
  EXPECT_EQ(contents.events.front().bytes, 5000u - 1024u);
  EXPECT_EQ(contents.events.back().bytes, 4999u);
}

TEST(TraceRing, ResetForgetsEarlierEvents) {
  TraceRing ring(1024);
  for (std::uint64_t n = 0; n < 2000; ++n) ring.push(numbered(n));
  ring.reset();
  ring.push(numbered(7));
  const TraceRing::Contents contents = ring.collect();
  ASSERT_EQ(contents.events.size(), 1u);
  EXPECT_EQ(contents.events[0].bytes, 7u);
  EXPECT_EQ(contents.dropped, 0u);
}

TEST(TraceRing, FieldsSurviveThePacking) {
  TraceRing ring(1024);
  TraceEvent event;
  event.kind = TraceEventKind::DeviceWork;
  event.hook = HookId::fillRandom;
  event.failed = true;
  event.timing = WorkTiming::Events;
  event.type = static_cast<DeviceType>(63);
  event.device = 5;
  event.thread = 0xfffffffeu;
  event.stream = -1;
  event.object = ~0ull;
  event.begin = -3;
  event.end = std::int64_t{1} << 62;
  ring.push(event);
  const TraceEvent back = ring.collect().events.at(0);
  EXPECT_EQ(back.kind, event.kind);
  EXPECT_EQ(back.hook, event.hook);
  EXPECT_TRUE(back.failed);
  EXPECT_EQ(back.timing, event.timing);
  EXPECT_EQ(back.type, event.type);
  EXPECT_EQ(back.device, 5);
  EXPECT_EQ(back.thread, event.thread);
  EXPECT_EQ(back.stream, -1);
  EXPECT_EQ(back.object, event.object);
  EXPECT_EQ(back.begin, -3);
  EXPECT_EQ(back.end, event.end);
}

// Writers wrap the ring many times while a reader collects, for as long as
// the reader takes to collect 200 times (so the two overlap, however the
// threads are scheduled): every event the reader keeps is whole, and kept +
// dropped accounts for every push.
TEST(TraceRing, ManyWritersAndAReaderNeverSeeATornEvent) {
  TraceRing ring(1024);
  constexpr int kWriters = 4;
  constexpr std::uint64_t kStride = std::uint64_t{1} << 40;  // each writer's numbers
  std::atomic<bool> reading{true};
  std::atomic<std::uint64_t> pushed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      std::uint64_t n = 0;
      while (reading.load(std::memory_order_relaxed) || n < 2048) {
        ring.push(numbered(n + static_cast<std::uint64_t>(w) * kStride,
                           static_cast<std::uint32_t>(w)));
        ++n;
      }
      pushed += n;
    });
  }
  std::uint64_t torn = 0;
  for (int read = 0; read < 200; ++read) {
    const TraceRing::Contents contents = ring.collect();
    for (const TraceEvent& event : contents.events) {
      const bool whole = event.ptr == event.bytes * 3 + 1 &&
                         event.end == event.begin + 7 &&
                         event.bytes / kStride == event.thread;
      torn += whole ? 0 : 1;
    }
  }
  reading = false;
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(torn, 0u) << "events mixed from two writes were kept";
  const TraceRing::Contents contents = ring.collect();
  EXPECT_EQ(contents.events.size() + contents.dropped, pushed.load());
  // A writer held up in a slot while the others went round the ring loses
  // its event (counted above), so the ring may hold a few fewer.
  EXPECT_LE(contents.events.size(), ring.capacity());
  EXPECT_GT(contents.events.size(), ring.capacity() / 2);
}

}  // namespace
}  // namespace accel::trace::detail
