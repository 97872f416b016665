// `accel memviz` end to end: a snapshot from the real allocator, the page
// written by the tool, and the page rendered by a real headless Chromium,
// read back as its DOM and its console log.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "accel/memory/caching_allocator.h"
#include "accel/memory/snapshot_json.h"
#include "memory/fake_segment_source.h"
#include "memory/headless_chromium.h"
#include "memory/memviz_snapshots.h"

namespace accel::memory {
namespace {

using testing::ChromiumRun;
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

// Zoom and pan as a user does them, with the mouse on the overview strip,
// then the time axis chosen in the selector:
// the test drives a copy of the page with a script appended after the
// page's own (the page itself carries nothing for tests), then reads what
// the page says it shows.
TEST(MemvizPage, DraggingOnTheStripZoomsAndPansAndTheAxisShowsTime) {
  const std::string browser = testing::findChromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  const std::string dir = ::testing::TempDir();
  const std::string snapshot = dir + "memviz_drag.json";
  std::ofstream(snapshot) << memorySnapshotToJson(testing::trainingSnapshot(3000, 20));
  const std::string page = dir + "memviz_drag.html";
  int status = -1;
  const std::string out = runTool("memviz " + snapshot + " -o " + page, status);
  ASSERT_EQ(status, 0) << out;
  std::string html = readWholeFile(page);
  const std::size_t body_end = html.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  // x: pixels from the strip's left edge (the plot spans 78 to 962).
  html.insert(body_end, R"(<script>
(function () {
  var strip = document.getElementById('overview-axes');
  var note = document.getElementById('zoom-note');
  function fire(type, x) {
    var r = strip.getBoundingClientRect();
    strip.dispatchEvent(new MouseEvent(type, {clientX: r.left + x, clientY: r.top + 20,
                                              bubbles: true}));
  }
  function drag(from, to) { fire('mousedown', from); fire('mousemove', to); fire('mouseup', to); }
  drag(300, 500);
  document.body.setAttribute('data-zoomed', note.textContent);
  drag(400, 500);
  document.body.setAttribute('data-panned', note.textContent);
  drag(450, 1000);
  document.body.setAttribute('data-panned-to-end', note.textContent);
  strip.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));
  document.body.setAttribute('data-reset', note.textContent);
  var mode = document.getElementById('x-mode');
  mode.value = 'time';
  mode.dispatchEvent(new Event('change'));
  var title = document.querySelector('.x-axis .title').textContent;
  var ticks = document.querySelectorAll('.x-axis .tick');
  document.body.setAttribute('data-time-axis',
                             title + ': ' + ticks[ticks.length - 1].textContent);
})();
</script>)");
  const std::string driven = dir + "memviz_drag_driven.html";
  std::ofstream(driven, std::ios::binary) << html;
  const ChromiumRun run = testing::runChromium(browser, driven, dir, "drag");
  ASSERT_EQ(run.status, 0) << run.console;
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  // "showing A to B" (event indices) from an attribute of the dumped DOM.
  const auto shown = [&](const std::string& name) -> std::pair<long, long> {
    const std::string key = "data-" + name + "=\"showing ";
    const std::size_t at = run.output.find(key);
    if (at == std::string::npos) return {-1, -1};
    long a = -1, b = -1;
    std::sscanf(run.output.c_str() + at + key.size(), "%ld to %ld", &a, &b);
    return {a, b};
  };
  const auto zoomed = shown("zoomed"), panned = shown("panned"),
             end = shown("panned-to-end");
  ASSERT_GE(zoomed.first, 0) << run.output.substr(0, 2000);
  const long events = 3000;
  // 200 of the strip's 884 pixels, from pixel 222 of the plot.
  EXPECT_NEAR(zoomed.first, events * 222 / 884, events / 100);
  EXPECT_NEAR(zoomed.second - zoomed.first, events * 200 / 884, events / 100);
  // Panning keeps the width and moves by 100 pixels' worth.
  ASSERT_GE(panned.first, 0) << run.output.substr(0, 2000);
  EXPECT_NEAR(panned.second - panned.first, zoomed.second - zoomed.first, 1);
  EXPECT_NEAR(panned.first - zoomed.first, events * 100 / 884, events / 100);
  // Past the end it stops there, still the same width.
  ASSERT_GE(end.first, 0) << run.output.substr(0, 2000);
  EXPECT_NEAR(end.second - end.first, zoomed.second - zoomed.first, 1);
  EXPECT_GE(end.second, events - 1);
  EXPECT_NE(run.output.find("data-reset=\"\""), std::string::npos)
      << "double-click zooms out";
  // The time axis: its title, and ticks in time units.
  const std::string time_key = "data-time-axis=\"time since the first event: ";
  const std::size_t time_axis = run.output.find(time_key);
  ASSERT_NE(time_axis, std::string::npos) << run.output.substr(0, 2000);
  const std::size_t tick_at = time_axis + time_key.size();
  const std::string last_tick =
      run.output.substr(tick_at, run.output.find('"', tick_at) - tick_at);
  EXPECT_TRUE(last_tick.ends_with(" ms") || last_tick.ends_with(" s")) << last_tick;
}

}  // namespace
}  // namespace accel::memory
