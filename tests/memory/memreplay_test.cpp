// The memreplay engine on hand-written and synthetic traces, and the
// `accel memreplay` command run as a user would.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "accel/error.h"
#include "memory/run_command.h"
#include "memory/synthetic_trace.h"
#include "memreplay_trace.h"
#include "support/error_of.h"

namespace accel::tool {
namespace {

Trace parse(const std::string& text, bool lenient = false) {
  std::istringstream in(text);
  return parseTrace(in, "trace.txt", lenient);
}

// The message of the InvalidArgument that parsing `text` throws.
std::string parseErrorOf(const std::string& text) {
  return testing::errorOf<InvalidArgument>([&] { (void)parse(text); });
}

TEST(Memreplay, ParsesTheTextFormat) {
  const Trace trace = parse(
      "# comment\n\nalloc 0x10 1000\nalloc b 5000 3\nfree 0x10\n"
      "alloc 0x10 20 1\nfree b 3\nfree 0x10\n");
  ASSERT_EQ(trace.events.size(), 6u);
  EXPECT_EQ(trace.slots, 3u);
  EXPECT_EQ(trace.events[1].size, 5000u);
  EXPECT_EQ(trace.events[1].stream, 3);
  EXPECT_EQ(trace.events[2].kind, TraceEvent::Kind::Free);
  EXPECT_EQ(trace.events[2].slot, 0u);
  EXPECT_EQ(trace.events[3].slot, 2u);  // a new allocation at a reused address
}

TEST(Memreplay, BadLinesNameTheLineAndWhatIsWrong) {
  EXPECT_NE(parseErrorOf("alloc a 10\nalloc a 20\n")
                .find("trace.txt:2: address a is allocated again"),
            std::string::npos);
  EXPECT_NE(
      parseErrorOf("free a\n").find("trace.txt:1: address a is freed but not allocated"),
      std::string::npos);
  EXPECT_NE(parseErrorOf("alloc a ten\n").find("SIZE is not a byte count"),
            std::string::npos);
  EXPECT_NE(parseErrorOf("grow a 10\n").find("unknown action 'grow'"), std::string::npos);
  EXPECT_NE(parseErrorOf("alloc a 1 2 3\n").find("too many fields"), std::string::npos);
  EXPECT_EQ(parse("free a\n", /*lenient=*/true).events.size(), 0u);
}

TEST(Memreplay, ReplayReportsDeviceAllocationsAndPeaks) {
  const Trace trace =
      parse("alloc a 1000\nalloc b 3145728\nfree a\nalloc c 1000\nfree b\nfree c\n");
  const ReplayResult result = replayTrace(trace, {});
  EXPECT_EQ(result.events, 6u);
  EXPECT_EQ(result.allocs, 3u);
  EXPECT_EQ(result.device_allocs, 2);  // one small, one large segment; c reuses a
  EXPECT_EQ(result.peak_allocated, 1024 + 3145728);
  EXPECT_EQ(result.peak_reserved, 22 << 20);
  EXPECT_EQ(result.ooms, 0);
  EXPECT_GT(result.ns_per_op, 0.0);
}

TEST(Memreplay, AHugeSizeIsAnOutOfMemoryCountedAndTheReplayGoesOn) {
  // 2^64 - 512 and 2^64 - 1: sizes whose segment or rounding would wrap.
  const Trace trace = parse(
      "alloc a 18446744073709551104\nalloc b 1000\nfree a\n"
      "alloc c 18446744073709551615\nfree c\nfree b\n");
  for (const char* settings : {"", "expandable_segments:true"}) {
    ReplayOptions options;
    options.settings = memory::parseAllocatorSettings(settings);
    const ReplayResult result = replayTrace(trace, options);
    EXPECT_EQ(result.ooms, 2) << settings;
    EXPECT_EQ(result.allocs, 3u);
    EXPECT_EQ(result.device_allocs, 1);  // b's small segment only
    EXPECT_EQ(result.peak_allocated, 1024);
  }
}

TEST(Memreplay, SyntheticTrainingTraceStaysCloseToTheAllocatedPeak) {
  const std::string text = memory::testing::syntheticTrainingTrace({.iterations = 12});
  const Trace trace = parse(text);
  const ReplayResult plain = replayTrace(trace, {});
  ReplayOptions expandable;
  expandable.settings = memory::parseAllocatorSettings("expandable_segments:true");
  const ReplayResult grown = replayTrace(trace, expandable);
  EXPECT_EQ(plain.ooms, 0);
  EXPECT_GT(plain.peak_allocated, 100 << 20);
  // Caching must not waste much at the peak; expandable segments not more.
  EXPECT_LT(plain.reservedOverAllocated(), 1.5);
  EXPECT_LE(grown.peak_reserved, plain.peak_reserved);
  // After the first iteration, the cache serves everything.
  EXPECT_LT(plain.device_allocs, static_cast<std::int64_t>(plain.allocs) / 20);
}

#ifdef ACCEL_TOOL_PATH
std::string run(const std::string& arguments, int& status) {
  return memory::testing::runCommand(
      std::string(ACCEL_TOOL_PATH) + " " + arguments + " 2>&1", status);
}

TEST(MemreplayCommand, PrintsTheFiguresForATraceFile) {
  const std::string path = ::testing::TempDir() + "memreplay_trace.txt";
  std::ofstream(path) << memory::testing::syntheticTrainingTrace({.iterations = 4});
  int status = -1;
  const std::string out = run("memreplay " + path, status);
  EXPECT_EQ(status, 0) << out;
  for (const char* part : {"device allocations:", "peak reserved:", "peak allocated:",
                           "reserved/allocated peak:", "fragmentation:",
                           "time per operation:", "malloc/free on the same events"}) {
    EXPECT_NE(out.find(part), std::string::npos) << part << " in: " << out;
  }
  const std::string json =
      run("memreplay --json --settings expandable_segments:true " + path, status);
  ASSERT_EQ(status, 0) << json;
  const nlohmann::json parsed = nlohmann::json::parse(json);
  EXPECT_GT(parsed["device_allocs"].get<int>(), 0);
  EXPECT_GE(parsed["reserved_over_allocated"].get<double>(), 1.0);
}

TEST(MemreplayCommand, BadInputIsAClearErrorAndNonZeroExit) {
  int status = -1;
  std::string out = run("memreplay /nonexistent/trace.txt", status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("cannot open '/nonexistent/trace.txt'"), std::string::npos) << out;
  const std::string path = ::testing::TempDir() + "memreplay_bad.txt";
  std::ofstream(path) << "alloc a 10\n";
  out = run("memreplay --settings bogus:1 " + path, status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("unknown allocator setting 'bogus'"), std::string::npos) << out;
}
#endif

}  // namespace
}  // namespace accel::tool
