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
  TraceEvent event;
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

// Writers wrap the ring many times while a reader collects: every event the
// reader keeps is whole, and kept + dropped accounts for every push.
TEST(TraceRing, ManyWritersAndAReaderNeverSeeATornEvent) {
  TraceRing ring(1024);
  constexpr int kWriters = 4;
  constexpr std::uint64_t kEach = 20000;
  std::atomic<bool> writing{true};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&ring, w] {
      for (std::uint64_t n = 0; n < kEach; ++n)
        ring.push(numbered(n + static_cast<std::uint64_t>(w) * kEach,
                           static_cast<std::uint32_t>(w)));
    });
  }
  std::thread reader([&] {
    while (writing.load()) {
      const TraceRing::Contents contents = ring.collect();
      for (const TraceEvent& event : contents.events) {
        ASSERT_EQ(event.ptr, event.bytes * 3 + 1);
        ASSERT_EQ(event.end, event.begin + 7);
        ASSERT_EQ(event.bytes / kEach, event.thread);
      }
    }
  });
  for (std::thread& writer : writers) writer.join();
  writing = false;
  reader.join();
  const TraceRing::Contents contents = ring.collect();
  EXPECT_EQ(contents.events.size() + contents.dropped, kWriters * kEach);
  EXPECT_EQ(contents.events.size(), ring.capacity());
}

}  // namespace
}  // namespace accel::trace::detail
