// The memviz page used as a user uses it, in headless Chromium: the mouse on
// the overview strip (zoom, pan, zoom out), the time axis chosen in the
// selector, a band hovered for its stack. Each test drives a copy of a
// training-like snapshot's page with a script appended after the page's own
// (the page itself carries nothing for tests); the script writes what the
// page then shows into attributes, read back from the dumped DOM.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "accel/memory/snapshot_json.h"
#include "memory/headless_chromium.h"
#include "memory/memviz_snapshots.h"

namespace accel::memory {
namespace {

using testing::ChromiumRun;

constexpr long kEvents = 3000;

// The page of trainingSnapshot(kEvents) with `script` run after the page's
// own, loaded in headless Chromium; skips without chromium.
ChromiumRun driveTrainingPage(const std::string& script, const std::string& tag) {
  const std::string browser = testing::findChromium();
  if (browser.empty()) return {};
  const std::string dir = ::testing::TempDir();
  const std::string snapshot = dir + "memviz_" + tag + ".json";
  std::ofstream(snapshot) << memorySnapshotToJson(testing::trainingSnapshot(kEvents, 20));
  const std::string page = dir + "memviz_" + tag + ".html";
  int status = -1;
  const std::string out = testing::runCommand(
      std::string(ACCEL_TOOL_PATH) + " memviz " + snapshot + " -o " + page + " 2>&1",
      status);
  EXPECT_EQ(status, 0) << out;
  std::string html = testing::readWholeFile(page);
  const std::size_t body_end = html.rfind("</body>");
  EXPECT_NE(body_end, std::string::npos);
  if (body_end == std::string::npos) return {};
  html.insert(body_end, "<script>\n(function () {\n" + script + "\n})();\n</script>");
  const std::string driven = dir + "memviz_" + tag + "_driven.html";
  std::ofstream(driven, std::ios::binary) << html;
  return testing::runChromium(browser, driven, dir, tag);
}

// The value of attribute data-NAME in the dumped DOM; "(absent)" if none.
std::string attribute(const std::string& dom, const std::string& name) {
  const std::string key = "data-" + name + "=\"";
  const std::size_t at = dom.find(key);
  if (at == std::string::npos) return "(absent)";
  const std::size_t from = at + key.size();
  return dom.substr(from, dom.find('"', from) - from);
}

TEST(MemvizInteraction, DraggingOnTheStripZoomsAndPansAndTheAxisShowsTime) {
  if (testing::findChromium().empty()) {
    GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  }
  // x: pixels from the strip's left edge (the plot spans 78 to 962).
  const ChromiumRun run = driveTrainingPage(R"(
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
                             title + ': ' + ticks[ticks.length - 1].textContent);)",
                                            "drag");
  ASSERT_EQ(run.status, 0) << run.console;
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  // "showing A to B" (event indices).
  const auto shown = [&](const std::string& name) -> std::pair<long, long> {
    long a = -1, b = -1;
    std::sscanf(attribute(run.output, name).c_str(), "showing %ld to %ld", &a, &b);
    return {a, b};
  };
  const auto zoomed = shown("zoomed"), panned = shown("panned"),
             end = shown("panned-to-end");
  ASSERT_GE(zoomed.first, 0) << run.output.substr(0, 2000);
  // 200 of the strip's 884 pixels, from pixel 222 of the plot.
  EXPECT_NEAR(zoomed.first, kEvents * 222 / 884, kEvents / 100);
  EXPECT_NEAR(zoomed.second - zoomed.first, kEvents * 200 / 884, kEvents / 100);
  // Panning keeps the width and moves by 100 pixels' worth.
  ASSERT_GE(panned.first, 0) << run.output.substr(0, 2000);
  EXPECT_NEAR(panned.second - panned.first, zoomed.second - zoomed.first, 1);
  EXPECT_NEAR(panned.first - zoomed.first, kEvents * 100 / 884, kEvents / 100);
  // Past the end it stops there, still the same width.
  ASSERT_GE(end.first, 0) << run.output.substr(0, 2000);
  EXPECT_NEAR(end.second - end.first, zoomed.second - zoomed.first, 1);
  EXPECT_GE(end.second, kEvents - 1);
  EXPECT_EQ(attribute(run.output, "reset"), "") << "double-click zooms out";
  // The time axis: its title, and ticks in time units.
  const std::string time_axis = attribute(run.output, "time-axis");
  EXPECT_TRUE(time_axis.starts_with("time since the first event: ")) << time_axis;
  EXPECT_TRUE(time_axis.ends_with(" ms") || time_axis.ends_with(" s")) << time_axis;
}

TEST(MemvizInteraction, HoveringABandShowsItsStackWithPythonFramesFirst) {
  if (testing::findChromium().empty()) {
    GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  }
  // Just above the x axis in the middle of the plot: the lowest band there
  // (the snapshot's stacks have 4 Python frames among 8 native ones, as
  // recorded, innermost first).
  const ChromiumRun run = driveTrainingPage(R"(
  var axes = document.getElementById('timeline-axes');
  var r = axes.getBoundingClientRect();
  axes.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + 520, clientY: r.top + 280,
                                                 bubbles: true}));
  var tip = document.getElementById('tip');
  document.body.setAttribute('data-tip-shown', tip.style.display);
  document.body.setAttribute('data-tip', tip.textContent.split('\n').join(' | '));)",
                                            "hover");
  ASSERT_EQ(run.status, 0) << run.console;
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  EXPECT_EQ(attribute(run.output, "tip-shown"), "block");
  const std::string tip = attribute(run.output, "tip");
  // "allocation SIZE ... | from ... to ... | frame | frame | ..."
  ASSERT_TRUE(tip.starts_with("allocation ")) << tip;
  const std::size_t first_python = tip.find(".py:");
  const std::size_t first_native = tip.find("libtorch_cuda.so");
  ASSERT_NE(first_python, std::string::npos) << tip;
  ASSERT_NE(first_native, std::string::npos) << tip;
  EXPECT_LT(first_python, first_native) << tip;
  // All four Python frames come before the first native one.
  std::size_t python_frames = 0;
  for (std::size_t at = tip.find(".py:"); at != std::string::npos && at < first_native;
       at = tip.find(".py:", at + 1)) {
    ++python_frames;
  }
  EXPECT_EQ(python_frames, 4u) << tip;
}

// The tooltip stays inside the window wherever the pointer is: on a band at
// the window's right edge (the tip's stack lines are wider than the room
// left of the pointer) and on a segment block at the window's bottom right.
TEST(MemvizInteraction, TooltipStaysInsideTheWindowAtItsRightAndBottomEdges) {
  if (testing::findChromium().empty()) {
    GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  }
  const ChromiumRun run = driveTrainingPage(R"(
  var root = document.documentElement, tip = document.getElementById('tip');
  function hover(node, x, y) {
    node.dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: y, bubbles: true}));
    var r = tip.getBoundingClientRect();
    return [tip.style.display, Math.round(r.left), Math.round(r.top), Math.round(r.right),
            Math.round(r.bottom), root.clientWidth, root.clientHeight].join(' ');
  }
  var axes = document.getElementById('timeline-axes');
  axes.scrollIntoView();
  var plot = axes.getBoundingClientRect();
  var right = Math.min(root.clientWidth, plot.left + 960);  // the plot ends at 962
  document.body.setAttribute('data-band-tip', hover(axes, right - 10, plot.top + 280));
  var blocks = document.querySelectorAll('#segments .block');
  var last = blocks[blocks.length - 1];
  last.scrollIntoView(false);
  var b = last.getBoundingClientRect();
  document.body.setAttribute('data-block-tip',
                             hover(last, Math.min(b.right, root.clientWidth) - 2, b.bottom - 2));)",
                                            "edges");
  ASSERT_EQ(run.status, 0) << run.console;
  EXPECT_FALSE(testing::consoleHasErrors(run.console)) << run.console;
  for (const char* name : {"band-tip", "block-tip"}) {
    // "display left top right bottom window-width window-height"
    const std::string tip = attribute(run.output, name);
    char display[16] = {};
    long left = -1, top = -1, right = -1, bottom = -1, width = -1, height = -1;
    ASSERT_EQ(std::sscanf(tip.c_str(), "%15s %ld %ld %ld %ld %ld %ld", display, &left,
                          &top, &right, &bottom, &width, &height),
              7)
        << name << ": " << tip;
    EXPECT_STREQ(display, "block") << name << ": " << tip;
    EXPECT_GE(left, 0) << name << ": " << tip;
    EXPECT_GE(top, 0) << name << ": " << tip;
    EXPECT_LE(right, width) << name << ": " << tip;
    EXPECT_LE(bottom, height) << name << ": " << tip;
  }
}

}  // namespace
}  // namespace accel::memory
