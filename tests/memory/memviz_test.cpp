// `accel memviz` end to end: a snapshot from the real allocator, the page
// written by the tool, and the page rendered by a real headless Chromium.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "accel/memory/caching_allocator.h"
#include "accel/memory/snapshot_json.h"
#include "memory/fake_segment_source.h"
#include "memory/run_command.h"

namespace accel::memory {
namespace {

constexpr std::size_t kKiB = 1 << 10;
constexpr std::size_t kMiB = 1 << 20;

Stream stream(StreamId id) { return Stream(Device::unchecked(DeviceType::CUDA, 0), id); }

std::string run(const std::string& command, int& status) {
  return testing::runCommand(command, status);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

std::string chromium() {
  if (const char* path = std::getenv("ACCEL_CHROMIUM")) return path;
  int status = -1;
  std::string found = run("command -v chromium || command -v chromium-browser", status);
  while (!found.empty() && (found.back() == '\n' || found.back() == ' '))
    found.pop_back();
  return status == 0 ? found : std::string();
}

// 7 blocks at the end, which is also the peak: small segment [free A][C][E]
// [free rest], large segment [B][D][free rest].
std::string writeSnapshot(const std::string& path, bool with_trace) {
  testing::FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  allocator.recordHistory({HistoryRecording::All, 1000, true});
  DataPtr a = allocator.allocate(0, 1000, stream(0));
  DataPtr b = allocator.allocate(0, 3 * kMiB, stream(0));
  DataPtr c = allocator.allocate(0, 4 * kKiB, stream(0));
  a.reset();
  DataPtr d = allocator.allocate(0, 2 * kMiB, stream(0));
  DataPtr e = allocator.allocate(0, 8 * kKiB, stream(0));
  const MemorySnapshot snapshot =
      allocator.snapshot({.device = 0, .include_trace = with_trace});
  std::size_t blocks = 0;
  for (const MemorySegment& segment : snapshot.segments) blocks += segment.blocks.size();
  EXPECT_EQ(blocks, 7u);
  std::ofstream(path) << memorySnapshotToJson(snapshot);
  return path;
}

class MemvizTest : public ::testing::TestWithParam<bool> {};

TEST_P(MemvizTest, PageRendersInHeadlessChromiumWithEveryBlock) {
  const bool with_trace = GetParam();
  const std::string dir = ::testing::TempDir();
  const std::string tag = with_trace ? "trace" : "state";
  const std::string snapshot = writeSnapshot(dir + "memviz_" + tag + ".json", with_trace);
  const std::string page = dir + "memviz_" + tag + ".html";
  int status = -1;
  const std::string tool_out =
      run(std::string(ACCEL_TOOL_PATH) + " memviz " + snapshot + " -o " + page + " 2>&1",
          status);
  ASSERT_EQ(status, 0) << tool_out;
  const std::string html = readFile(page);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);

  const std::string browser = chromium();
  if (browser.empty()) {
    GTEST_SKIP() << "chromium is not installed (Debian package 'chromium'); the page "
                    "was written but not rendered";
  }
  const std::string log = dir + "memviz_" + tag + ".log";
  const std::string dom =
      run("timeout 120 " + browser +
              " --headless --disable-gpu --no-sandbox "
              "--no-first-run --disable-dev-shm-usage "
              "--user-data-dir=" +
              dir + "memviz_profile_" + tag +
              " --enable-logging=stderr --v=0 --dump-dom file://" + page + " 2>" + log,
          status);
  ASSERT_EQ(status, 0) << "chromium failed to run:\n" << readFile(log);
  ASSERT_NE(dom.find("<svg"), std::string::npos) << "no page was rendered:\n" << dom;
  EXPECT_NE(dom.find(">rendered<"), std::string::npos) << "the script did not finish:\n"
                                                       << dom.substr(0, 2000);
  EXPECT_EQ(count(dom, "class=\"block "), 7u);
  EXPECT_NE(dom.find("id=\"block-count\">7<"), std::string::npos);
  EXPECT_NE(dom.find(with_trace ? "Segments at the peak" : "Segments at snapshot time"),
            std::string::npos);
  if (with_trace) {
    // One polygon per allocation in the timeline: A, B, C, D, E.
    EXPECT_EQ(count(dom, "class=\"alloc\""), 5u);
  }
  const std::string console = readFile(log);
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << console;
  EXPECT_EQ(console.find(":CONSOLE"), std::string::npos) << console;
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutTrace, MemvizTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "Trace" : "StateOnly";
                         });

TEST(MemvizCommand, RefusesWhatIsNotASnapshot) {
  const std::string path = ::testing::TempDir() + "memviz_not_a_snapshot.json";
  std::ofstream(path) << "{\"hello\": 1}";
  int status = -1;
  const std::string out = run(
      std::string(ACCEL_TOOL_PATH) + " memviz " + path + " -o /dev/null 2>&1", status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("no \"segments\" list"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel::memory
