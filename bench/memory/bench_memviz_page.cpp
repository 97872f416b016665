// `accel memviz` at scale (a 60,000-event snapshot gives a page of
// at most 10 MB that Chromium draws within 3 s). Two rows:
//   WritePage   - the tool's work in-process on the 60,000-event snapshot's
//                 JSON: parse, check and compact it, write the page. Each
//                 iteration also times nlohmann::json::parse of the same text,
//                 the baseline every JSON reader pays: x_parse = total / parse.
//   ChromiumDraw - headless Chromium (Debian's chromium) opening the page from
//                 disk. The time is the page's own data-drawn-ms: from
//                 navigation to the end of its drawing script (HTML and JSON
//                 parsed, layout computed, timeline, axes, legend, map and
//                 summary drawn). Each iteration also opens the 7-block page
//                 (the same page with almost no data), the baseline of a
//                 browser start and an empty drawing: x_tiny = 60k / tiny.
//                 Counters: page_mb, wall_s (the whole headless run: start,
//                 load, draw, DOM dump), tiny_ms.
// Skips (with the reason) when chromium is not installed.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "accel/memory/snapshot_json.h"
#include "memory/headless_chromium.h"
#include "memory/memviz_snapshots.h"
#include "memviz_model.h"
#include "memviz_page.h"
#include "snapshot_document.h"
#include "snapshot_fields.h"

namespace accel::memory {
namespace {

constexpr std::size_t kEvents = 60000;

// The 60,000-event snapshot's JSON, made once.
const std::string& bigSnapshotJson() {
  static const std::string json =
      memorySnapshotToJson(testing::trainingSnapshot(kEvents));
  return json;
}

std::string writePage(const std::string& dir, const std::string& json,
                      const std::string& name) {
  const nlohmann::json snapshot = tool::parseSnapshotDocument(json, name, "bench");
  const tool::SnapshotFields fields("bench: " + name);
  const std::string page = tool::renderMemvizPage(
      tool::buildMemvizModel(snapshot, 0, "Memory of device 0 — " + name, fields));
  const std::string path = dir + name + ".html";
  std::ofstream(path, std::ios::binary) << page;
  return path;
}

// The two pages, written once into a directory of their own that is removed
// (with the browser profiles) when the program ends.
struct Pages {
  std::string dir, big, tiny;
  Pages() {
    char pattern[] = "/tmp/bench_memviz_XXXXXX";
    const char* made = mkdtemp(pattern);
    dir = std::string(made != nullptr ? made : "/tmp") + "/";
    big = writePage(dir, bigSnapshotJson(), "memviz_60k");
    tiny = writePage(dir, memorySnapshotToJson(testing::sevenBlockSnapshot(true)),
                     "memviz_tiny");
  }
  ~Pages() {
    std::error_code ignored;
    if (dir != "/tmp/") std::filesystem::remove_all(dir, ignored);
  }
};
const Pages& pages() {
  static const Pages made;
  return made;
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void WritePage(benchmark::State& state) {
  const std::string& json = bigSnapshotJson();
  double parse_s = 0, total_s = 0;
  std::size_t page_bytes = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    const nlohmann::json parsed = nlohmann::json::parse(json);
    benchmark::DoNotOptimize(parsed.size());
    parse_s += seconds(std::chrono::steady_clock::now() - start);
    start = std::chrono::steady_clock::now();
    const nlohmann::json snapshot =
        tool::parseSnapshotDocument(json, "60k.json", "bench");
    const tool::SnapshotFields fields("bench: 60k.json");
    const std::string page =
        tool::renderMemvizPage(tool::buildMemvizModel(snapshot, 0, "title", fields));
    page_bytes = page.size();
    const double elapsed = seconds(std::chrono::steady_clock::now() - start);
    total_s += elapsed;
    state.SetIterationTime(elapsed);
  }
  state.counters["snapshot_mb"] = static_cast<double>(json.size()) / 1e6;
  state.counters["page_mb"] = static_cast<double>(page_bytes) / 1e6;
  state.counters["x_parse"] = parse_s > 0 ? total_s / parse_s : 0;
}
BENCHMARK(WritePage)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3);

// Milliseconds from navigation to drawn, as the page records it; negative
// when the page did not finish.
double drawnMs(const std::string& dom) {
  const std::string key = "data-drawn-ms=\"";
  const std::size_t at = dom.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(dom.substr(at + key.size()));
}

void ChromiumDraw(benchmark::State& state) {
  const std::string browser = testing::findChromium();
  if (browser.empty()) {
    state.SkipWithError("chromium is not installed (Debian package 'chromium')");
    return;
  }
  const std::string& big = pages().big;
  const std::string& tiny = pages().tiny;
  const std::string& dir = pages().dir;
  double big_ms = 0, tiny_ms = 0, wall_s = 0;
  for (auto _ : state) {
    const testing::ChromiumRun small = testing::runChromium(browser, tiny, dir, "tiny");
    const auto start = std::chrono::steady_clock::now();
    const testing::ChromiumRun run = testing::runChromium(browser, big, dir, "60k");
    const double wall = seconds(std::chrono::steady_clock::now() - start);
    const double drawn = drawnMs(run.output), drawn_tiny = drawnMs(small.output);
    if (run.status != 0 || drawn < 0 || drawn_tiny < 0 ||
        testing::consoleHasErrors(run.console)) {
      state.SkipWithError(("the page was not drawn cleanly:\n" + run.console).c_str());
      return;
    }
    big_ms += drawn;
    tiny_ms += drawn_tiny;
    wall_s += wall;
    state.SetIterationTime(drawn / 1000);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["page_mb"] =
      static_cast<double>(testing::readWholeFile(big).size()) / 1e6;
  state.counters["tiny_ms"] = tiny_ms / n;
  state.counters["x_tiny"] = tiny_ms > 0 ? big_ms / tiny_ms : 0;
  state.counters["wall_s"] = wall_s / n;
}
BENCHMARK(ChromiumDraw)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5);

}  // namespace
}  // namespace accel::memory
