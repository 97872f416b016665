// The Chrome trace-event JSON of a trace: valid JSON, hook spans on their
// threads, device work on its stream's track, captures as spans, the
// allocator's counters following the history, the dropped count written.
#include "layers/trace/trace_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace accel::trace::detail {
namespace {

std::string hookName(HookId id) { return std::string(hookInfo(id).name); }

using nlohmann::json;

constexpr std::int64_t kOrigin = 1'000'000'000;

TraceEvent hook(HookId id, std::int64_t begin_us, std::int64_t end_us) {
  TraceEvent e;
  e.kind = TraceEventKind::Hook;
  e.hook = id;
  e.type = DeviceType::CUDA;
  e.device = 0;
  e.thread = 42;
  e.begin = kOrigin + begin_us * 1000;
  e.end = kOrigin + end_us * 1000;
  return e;
}

std::vector<json> named(const json& trace, std::string_view name) {
  std::vector<json> found;
  for (const json& e : trace["traceEvents"])
    if (e["name"] == name) found.push_back(e);
  return found;
}

// The "args.name" of the metadata event `what` for pid/tid.
std::string metadataName(const json& trace, std::string_view what, int pid, int tid) {
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == what && e["pid"] == pid && e["tid"] == tid)
      return e["args"]["name"];
  return "<none>";
}

TraceContents sample() {
  TraceContents c;
  c.origin_ns = kOrigin;
  c.capacity = 1024;
  c.dropped = 17;
  c.process_id = 4321;
  c.threads.push_back({42, "main thread"});
  TraceEvent copy = hook(HookId::copyHostToDevice, 10, 25);
  copy.stream = 3;
  copy.bytes = 4096;
  copy.ptr = 0x1000;
  copy.ptr2 = 0x2000;
  c.events.push_back(copy);
  TraceEvent work = copy;
  work.kind = TraceEventKind::DeviceWork;
  work.timing = WorkTiming::Events;
  work.begin = kOrigin + 12'500;
  work.end = kOrigin + 30'000;
  c.events.push_back(work);
  TraceEvent failed = hook(HookId::getNewStream, 30, 31);
  failed.failed = true;
  c.events.push_back(failed);
  TraceEvent begin = hook(HookId::graphCaptureBegin, 40, 41);
  begin.object = 9;
  begin.stream = 3;
  TraceEvent end = hook(HookId::graphCaptureEnd, 50, 52);
  end.object = 9;
  c.events.push_back(begin);
  c.events.push_back(end);
  MemoryTrack track;
  track.type = DeviceType::CUDA;
  track.device = 0;
  track.base_allocated = 100;
  track.base_reserved = 1000;
  MemoryTraceEntry segment;
  segment.action = MemoryTraceEntry::Action::SegmentAlloc;
  segment.size = 2 << 20;
  segment.time_ns = kOrigin + 60'000;
  MemoryTraceEntry alloc;
  alloc.action = MemoryTraceEntry::Action::Alloc;
  alloc.size = 512;
  alloc.time_ns = kOrigin + 61'000;
  MemoryTraceEntry oom;
  oom.action = MemoryTraceEntry::Action::Oom;
  oom.size = 1 << 30;
  oom.device_free = 5 << 20;
  oom.time_ns = kOrigin + 62'000;
  track.entries = {segment, alloc, oom};
  c.memory.push_back(track);
  return c;
}

TEST(TraceJson, HookCallsAreSpansOnTheCallingThreadWithTheirArguments) {
  const json trace = json::parse(traceToJson(sample()));
  const std::vector<json> copies = named(trace, hookName(HookId::copyHostToDevice));
  ASSERT_EQ(copies.size(), 2u);  // the call and its device work
  const json& call = copies[0]["cat"] == "hook" ? copies[0] : copies[1];
  EXPECT_EQ(call["ph"], "X");
  EXPECT_EQ(call["pid"], 1);
  EXPECT_EQ(call["tid"], 42);
  EXPECT_DOUBLE_EQ(call["ts"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(call["dur"].get<double>(), 15.0);
  EXPECT_EQ(call["args"]["backend"], "cuda");
  EXPECT_EQ(call["args"]["device"], 0);
  EXPECT_EQ(call["args"]["stream"], 3);
  EXPECT_EQ(call["args"]["bytes"], 4096);
  EXPECT_EQ(call["args"]["ptr"], "0x1000");
  EXPECT_EQ(call["args"]["src"], "0x2000");
  EXPECT_EQ(named(trace, hookName(HookId::getNewStream)).at(0)["args"]["failed"], true);
  EXPECT_EQ(metadataName(trace, "thread_name", 1, 42), "main thread");
  EXPECT_EQ(metadataName(trace, "process_name", 1, 0), "host (pid 4321)");
}

TEST(TraceJson, DeviceWorkLiesOnItsStreamsTrackInTheDevicesProcess) {
  const json trace = json::parse(traceToJson(sample()));
  const std::vector<json> copies = named(trace, hookName(HookId::copyHostToDevice));
  const json& work = copies[0]["cat"] == "device" ? copies[0] : copies[1];
  EXPECT_EQ(work["cat"], "device");
  EXPECT_DOUBLE_EQ(work["ts"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(work["dur"].get<double>(), 17.5);
  EXPECT_EQ(work["args"]["timing"], "events");
  const int pid = work["pid"], tid = work["tid"];
  EXPECT_NE(pid, 1);
  EXPECT_EQ(metadataName(trace, "process_name", pid, 0), "cuda:0");
  EXPECT_EQ(metadataName(trace, "thread_name", pid, tid), "stream 3");
}

// Host-timed spans of a stream (waits, captures, work no event timed) have a
// track of their own: they overlap the device's spans, and spans of one
// track must nest. A capture on a stream with no other work still has its
// track named.
TEST(TraceJson, HostTimedSpansOfAStreamHaveATrackOfTheirOwn) {
  TraceContents c = sample();
  TraceEvent wait = hook(HookId::synchronizeStream, 11, 40);
  wait.kind = TraceEventKind::DeviceWork;
  wait.stream = 3;
  c.events.push_back(wait);
  for (TraceEvent& e : c.events)
    if (e.hook == HookId::graphCaptureBegin) e.stream = 5;  // a stream with nothing else
  const json trace = json::parse(traceToJson(c));
  const json waited = named(trace, hookName(HookId::synchronizeStream)).at(0);
  const std::vector<json> copies = named(trace, hookName(HookId::copyHostToDevice));
  const json& work = copies[0]["cat"] == "device" ? copies[0] : copies[1];
  EXPECT_EQ(waited["pid"], work["pid"]);
  EXPECT_NE(waited["tid"], work["tid"]);
  EXPECT_EQ(metadataName(trace, "thread_name", waited["pid"], waited["tid"]),
            "stream 3 (host times)");
  const json capture = named(trace, "capture graph 9").at(0);
  EXPECT_EQ(metadataName(trace, "thread_name", capture["pid"], capture["tid"]),
            "stream 5 (host times)");
}

TEST(TraceJson, AGraphCaptureIsASpanFromItsBeginToItsEnd) {
  const json trace = json::parse(traceToJson(sample()));
  const std::vector<json> captures = named(trace, "capture graph 9");
  ASSERT_EQ(captures.size(), 1u);
  EXPECT_DOUBLE_EQ(captures[0]["ts"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(captures[0]["dur"].get<double>(), 12.0);
  EXPECT_EQ(captures[0]["cat"], "graph");
}

TEST(TraceJson, AllocatorCountersFollowTheHistoryFromTheirBase) {
  const json trace = json::parse(traceToJson(sample()));
  const std::vector<json> reserved = named(trace, "reserved bytes");
  const std::vector<json> allocated = named(trace, "allocated bytes");
  ASSERT_FALSE(reserved.empty());
  ASSERT_FALSE(allocated.empty());
  EXPECT_EQ(reserved.front()["args"]["bytes"], 1000);
  EXPECT_EQ(reserved.back()["args"]["bytes"], 1000 + (2 << 20));
  EXPECT_EQ(allocated.back()["args"]["bytes"], 100 + 512);
  EXPECT_EQ(reserved.back()["ph"], "C");
  const std::vector<json> ooms = named(trace, "oom");
  ASSERT_EQ(ooms.size(), 1u);
  EXPECT_EQ(ooms[0]["ph"], "i");
  EXPECT_EQ(ooms[0]["args"]["size"], 1 << 30);
  EXPECT_EQ(ooms[0]["args"]["device_free"], 5 << 20);
  EXPECT_EQ(ooms[0]["args"]["allocated"], 612);
  EXPECT_EQ(metadataName(trace, "thread_name", ooms[0]["pid"], ooms[0]["tid"]),
            "allocator");
}

TEST(TraceJson, TheDroppedCountAndCapacityAreWritten) {
  const json trace = json::parse(traceToJson(sample()));
  EXPECT_EQ(trace["otherData"]["dropped_events"], 17);
  EXPECT_EQ(trace["otherData"]["ring_capacity"], 1024);
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
}

TEST(TraceJson, AllocationsOfADeviceWithoutHistoryMakeTheAllocatedCounter) {
  TraceContents c;
  c.origin_ns = kOrigin;
  TraceEvent alloc;
  alloc.kind = TraceEventKind::Allocation;
  alloc.type = DeviceType::HIP;
  alloc.device = 1;
  alloc.bytes = 256;
  alloc.ptr = 0xabc;
  alloc.begin = alloc.end = kOrigin + 5000;
  TraceEvent free = alloc;
  free.kind = TraceEventKind::Free;
  free.begin = free.end = kOrigin + 9000;
  c.events = {alloc, free};
  const json trace = json::parse(traceToJson(c));
  const std::vector<json> counts = named(trace, "allocated bytes");
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0]["args"]["bytes"], 256);
  EXPECT_EQ(counts[1]["args"]["bytes"], 0);
  EXPECT_EQ(named(trace, "alloc").at(0)["args"]["addr"], "0xabc");
}

TEST(TraceJson, EveryThreadWithEventsHasANameTheUnnamedTheirId) {
  TraceContents c;
  c.threads.push_back({7, "main thread"});
  c.threads.push_back({7, "main thread"});  // named twice: one name event
  TraceEvent call = hook(HookId::getCurrentStream, 1, 2);
  call.thread = 7;
  c.events.push_back(call);
  call.thread = 8;  // a thread past the recorder's bound on names
  c.events.push_back(call);
  const json trace = json::parse(traceToJson(c));
  EXPECT_EQ(metadataName(trace, "thread_name", 1, 7), "main thread");
  EXPECT_EQ(metadataName(trace, "thread_name", 1, 8), "thread 8");
  int names_of_7 = 0;
  for (const json& e : trace["traceEvents"])
    names_of_7 += e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == 7;
  EXPECT_EQ(names_of_7, 1);
}

TEST(TraceJson, NamesWithQuotesAndControlCharactersStayValidJson) {
  TraceContents c;
  c.threads.push_back({7, "a \"quoted\"\n\\ name"});
  const json trace = json::parse(traceToJson(c));
  EXPECT_EQ(metadataName(trace, "thread_name", 1, 7), "a \"quoted\"\n\\ name");
}

}  // namespace
}  // namespace accel::trace::detail
