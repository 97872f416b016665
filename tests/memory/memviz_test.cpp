// `accel memviz` end to end: a snapshot from the real allocator, the page
// written by the tool, and the page rendered by a real headless Chromium,
// read back as its DOM and its console log.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "accel/memory/allocator_settings.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/snapshot_json.h"
#include "memory/fake_segment_source.h"
#include "memory/headless_chromium.h"
#include "memory/memviz_snapshots.h"

namespace accel::memory {
namespace {

using testing::ChromiumRun;
using testing::FakeSegmentSource;
using testing::readWholeFile;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

std::string runTool(const std::string& arguments, int& status) {
  return testing::runCommand(std::string(ACCEL_TOOL_PATH) + " " + arguments + " 2>&1",
                             status);
}

class MemvizTest : public ::testing::TestWithParam<bool> {};

TEST_P(MemvizTest, PageRendersInHeadlessChromiumWithAxesLegendAndEveryBlock) {
  const bool with_trace = GetParam();
  const std::string dir = ::testing::TempDir();
  const std::string tag = with_trace ? "trace" : "state";
  const std::string snapshot = dir + "memviz_" + tag + ".json";
  std::ofstream(snapshot) << memorySnapshotToJson(
      testing::sevenBlockSnapshot(with_trace));
  const std::string page = dir + "memviz_" + tag + ".html";
  int status = -1;
  const std::string tool_out = runTool("memviz " + snapshot + " -o " + page, status);
  ASSERT_EQ(status, 0) << tool_out;
  const std::string html = readWholeFile(page);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);

  const std::string browser = testing::findChromium();
  if (browser.empty()) {
    GTEST_SKIP() << "chromium is not installed (Debian package 'chromium'); the page "
                    "was written but not rendered";
  }
  const ChromiumRun run = testing::runChromium(browser, page, dir, tag);
  ASSERT_EQ(run.status, 0) << "chromium failed to run:\n" << run.console;
  const std::string& dom = run.output;
  ASSERT_NE(dom.find("data-drawn-ms=\""), std::string::npos)
      << "the script did not finish:\n"
      << dom.substr(0, 3000);
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  EXPECT_NE(dom.find("<div id=\"error\" hidden=\"\">"), std::string::npos)
      << "the error banner is shown";
  // Nothing of how the page is tested is on it.
  for (const char* word : {">rendering<", ">rendered<", "data-blocks", "id=\"status\""}) {
    EXPECT_EQ(dom.find(word), std::string::npos) << word;
  }
  EXPECT_EQ(dom.find(dir), std::string::npos) << "the page shows the temporary directory";

  EXPECT_EQ(count(dom, "class=\"block "), 7u);
  EXPECT_NE(dom.find("id=\"snapshot-blocks\">7<"), std::string::npos);
  EXPECT_NE(dom.find("id=\"snapshot-segments\">2<"), std::string::npos);
  // Axes with their titles and tick labels, and the legends.
  EXPECT_NE(dom.find("class=\"axis y-axis\""), std::string::npos);
  EXPECT_NE(dom.find("class=\"axis x-axis\""), std::string::npos);
  EXPECT_NE(dom.find("allocated bytes</text>"), std::string::npos);
  EXPECT_NE(dom.find("event index in the trace</text>"), std::string::npos);
  EXPECT_GE(count(dom, "class=\"tick\""), 6u);
  for (const char* key :
       {"bands", "small", "peak-mark", "oom-mark", "allocated", "pending", "free"}) {
    EXPECT_NE(dom.find(std::string("data-key=\"") + key + "\""), std::string::npos)
        << key;
  }
  if (with_trace) {
    EXPECT_NE(dom.find("Segments at the peak (after event"), std::string::npos);
    // The peak is the end here: every figure of the peak column is known and
    // agrees with the snapshot's.
    EXPECT_NE(dom.find("id=\"peak-blocks\">7<"), std::string::npos);
    EXPECT_NE(dom.find("id=\"peak-live\">4<"), std::string::npos);
    EXPECT_NE(dom.find("id=\"snapshot-live\">4<"), std::string::npos);
    EXPECT_NE(dom.find("class=\"peak\""), std::string::npos);
  } else {
    EXPECT_NE(dom.find("Segments at snapshot time"), std::string::npos);
    EXPECT_NE(dom.find("id=\"peak-blocks\">no trace<"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutTrace, MemvizTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "Trace" : "StateOnly";
                         });

// The attribute `name` of the element whose id is `id` in a dumped DOM;
// "(absent)" if either is missing.
std::string attributeOf(const std::string& dom, const std::string& id,
                        const std::string& name) {
  const std::size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "(absent)";
  const std::size_t open = dom.rfind('<', at), close = dom.find('>', at);
  const std::string tag = dom.substr(open, close - open);
  const std::size_t key = tag.find(" " + name + "=\"");
  if (key == std::string::npos) return "(absent)";
  const std::size_t from = key + name.size() + 3;
  return tag.substr(from, tag.find('"', from) - from);
}

// The text of the element whose id is `id` (no nested elements).
std::string textOf(const std::string& dom, const std::string& id) {
  const std::size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "(absent)";
  const std::size_t from = dom.find('>', at) + 1;
  return dom.substr(from, dom.find('<', from) - from);
}

struct MapFigures {
  std::uint64_t reserved = 0, free = 0, largest_free = 0;
  std::size_t segments = 0, blocks = 0;
};

MapFigures mapFigures(const MemorySnapshot& snapshot) {
  MapFigures f;
  for (const MemorySegment& segment : snapshot.segments) {
    ++f.segments;
    f.reserved += segment.total_size;
    for (const MemoryBlock& block : segment.blocks) {
      ++f.blocks;
      if (block.state != MemoryBlock::State::Free) continue;
      f.free += block.size;
      f.largest_free = std::max(f.largest_free, block.size);
    }
  }
  return f;
}

// Once the history ring has dropped the trace's beginning, the segments at
// the peak are still the allocator's at that moment: the segment figures of
// the page's peak column equal those of a snapshot taken at the peak, here
// with a segment made before the kept events began and freed after the peak
// (its segment_alloc dropped, its segment_free kept), with fixed-size
// segments and with expandable ones.
class MemvizWrappedRing : public ::testing::TestWithParam<bool> {};

TEST_P(MemvizWrappedRing, PeakColumnShowsTheSegmentsOfThatMoment) {
  const bool expandable = GetParam();
  constexpr std::size_t kKiB = 1 << 10;
  constexpr std::size_t kMiB = 1 << 20;
  constexpr std::size_t kRing = 64;
  FakeSegmentSource source(std::size_t{1} << 32, false, 2 * kMiB);
  CachingAllocator allocator(
      DeviceType::CUDA, 1, source,
      parseAllocatorSettings(expandable ? "expandable_segments:true" : ""));
  MemoryHistoryOptions history;
  history.max_entries = kRing;
  allocator.recordHistory(history);
  DataPtr early = allocator.allocate(0, 30 * kMiB, testing::memvizStream(0));
  // The first block of its segment, which starts there.
  const auto early_segment = reinterpret_cast<std::uintptr_t>(early.get());
  DataPtr kept = allocator.allocate(0, 512 * kKiB, testing::memvizStream(0));
  for (std::size_t i = 0; i < kRing; ++i) {  // 3 events each: the ring wraps
    DataPtr temporary = allocator.allocate(0, 4 * kKiB, testing::memvizStream(0));
  }
  DataPtr last = allocator.allocate(0, 8 * kMiB, testing::memvizStream(0));
  const MapFigures at_peak = mapFigures(allocator.snapshot({.device = 0}));
  const std::uint64_t allocated_at_peak =
      static_cast<std::uint64_t>(allocator.stats(0).allocated_bytes.current);
  last.reset();
  early.reset();
  allocator.emptyCache();
  const MemorySnapshot snapshot =
      allocator.snapshot({.device = 0, .include_trace = true});
  // The early segment's creation is gone from the trace; its release is in it.
  ASSERT_EQ(snapshot.device_traces[0].size(), kRing);
  bool released = false;
  for (const MemoryTraceEntry& entry : snapshot.device_traces[0]) {
    using Action = MemoryTraceEntry::Action;
    if (entry.address != early_segment) continue;
    ASSERT_NE(entry.action, Action::SegmentAlloc);
    ASSERT_NE(entry.action, Action::SegmentMap);
    released = released || entry.action == Action::SegmentFree ||
               entry.action == Action::SegmentUnmap;
  }
  ASSERT_TRUE(released);

  const std::string dir = ::testing::TempDir();
  const std::string tag = expandable ? "wrapped_expandable" : "wrapped";
  const std::string json = dir + "memviz_" + tag + ".json";
  std::ofstream(json) << memorySnapshotToJson(snapshot);
  const std::string page = dir + "memviz_" + tag + ".html";
  int status = -1;
  const std::string out = runTool("memviz " + json + " -o " + page, status);
  ASSERT_EQ(status, 0) << out;
  const std::string browser = testing::findChromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  const ChromiumRun run = testing::runChromium(browser, page, dir, tag);
  ASSERT_EQ(run.status, 0) << run.console;
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  const std::string& dom = run.output;
  ASSERT_NE(dom.find("Segments at the peak (after event"), std::string::npos)
      << dom.substr(0, 3000);
  const auto bytes = [](std::uint64_t n) { return std::to_string(n) + " bytes"; };
  EXPECT_EQ(attributeOf(dom, "peak-allocated", "title"), bytes(allocated_at_peak));
  EXPECT_EQ(attributeOf(dom, "peak-reserved", "title"), bytes(at_peak.reserved));
  EXPECT_EQ(textOf(dom, "peak-segments"), std::to_string(at_peak.segments));
  EXPECT_EQ(textOf(dom, "peak-blocks"), std::to_string(at_peak.blocks));
  EXPECT_EQ(attributeOf(dom, "peak-free", "title"), bytes(at_peak.free));
  EXPECT_EQ(attributeOf(dom, "peak-largest-free", "title"), bytes(at_peak.largest_free));
}

INSTANTIATE_TEST_SUITE_P(FixedAndExpandableSegments, MemvizWrappedRing, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "Expandable" : "Fixed";
                         });

// A snapshot string can hold anything a program named; none of it may end or
// comment out the script element that carries the data (the page used to
// stay blank on "<!--<script>").
TEST(MemvizPage, SnapshotStringsCannotBreakOutOfTheScript) {
  const std::string dir = ::testing::TempDir();
  MemorySnapshot snapshot = testing::sevenBlockSnapshot(true);
  const std::vector<MemoryFrame> hostile{
      {"<!--<script>", "evil.py", 1},
      {"</script><script>document.title='pwned'</script>", "</script>", 2},
      {"a & b > c <b>bold</b> \xe2\x80\xa8 end", "", 3}};
  for (MemoryTraceEntry& entry : snapshot.device_traces[0]) entry.frame_details = hostile;
  const std::string path = dir + "memviz_hostile_strings.json";
  std::ofstream(path) << memorySnapshotToJson(snapshot);
  const std::string page = dir + "memviz_hostile_strings.html";
  int status = -1;
  const std::string out = runTool("memviz " + path + " -o " + page, status);
  ASSERT_EQ(status, 0) << out;
  const std::string html = readWholeFile(page);
  EXPECT_EQ(html.find("<!--<script>"), std::string::npos);
  EXPECT_EQ(html.find("pwned'</script>"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 3u) << "one per script element, no more";

  const std::string browser = testing::findChromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  const ChromiumRun run = testing::runChromium(browser, page, dir, "hostile");
  ASSERT_EQ(run.status, 0) << run.console;
  EXPECT_NE(run.output.find("data-drawn-ms=\""), std::string::npos)
      << run.output.substr(0, 3000);
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  EXPECT_NE(run.output.find("<title>Memory of device 0"), std::string::npos)
      << "a snapshot string ran as a script";
  EXPECT_EQ(count(run.output, "class=\"block "), 7u);
}

}  // namespace
}  // namespace accel::memory
